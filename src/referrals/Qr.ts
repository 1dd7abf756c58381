/** The QR of a share URL, as a PNG data URL and as SVG, made with `qrcode`. */
import { Effect } from "effect"
import QRCode from "qrcode"

const OPTIONS = { errorCorrectionLevel: "M", margin: 2 } as const

export const shareQr = (shareUrl: string) =>
  Effect.all({
    png_data_url: Effect.tryPromise(() => QRCode.toDataURL(shareUrl, { ...OPTIONS, type: "image/png", width: 320 })),
    svg: Effect.tryPromise(() => QRCode.toString(shareUrl, { ...OPTIONS, type: "svg" }))
  }).pipe(Effect.orDie)
