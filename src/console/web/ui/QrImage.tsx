/** A KHQR payload drawn as a QR image in the browser (a payment's, a subscription invoice's). */
import { toDataURL } from "qrcode"
import { useEffect, useState } from "react"

export const QrImage = ({ alt, payload }: { readonly payload: string; readonly alt: string }) => {
  const [src, setSrc] = useState<string | undefined>(undefined)
  useEffect(() => {
    let current = true
    void toDataURL(payload, { margin: 1, width: 240, errorCorrectionLevel: "M" }).then((url) => {
      if (current) setSrc(url)
    })
    return () => {
      current = false
    }
  }, [payload])
  return src === undefined ? <div className="qr-placeholder" /> : <img className="qr" src={src} width={240} height={240} alt={alt} />
}
