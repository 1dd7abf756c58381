/**
 * Types for the parts of the `bakong-khqr` SDK (NBC's KHQR reference implementation, plain JavaScript)
 * that the KHQR tests use as their independent oracle.
 */
declare module "bakong-khqr" {
  /** Every field the SDK reads out of a payload, by its name; null when the payload does not carry it. */
  export interface KhqrDecoded {
    readonly merchantType: "29" | "30" | null
    readonly [field: string]: string | null
  }
  export class BakongKHQR {
    static decode(payload: string): { readonly status: { readonly code: number }; readonly data: KhqrDecoded }
    static verify(payload: string): { readonly isValid: boolean }
  }
}

declare module "bakong-khqr/src/helper/crc16" {
  /** CRC-16/CCITT-FALSE of the text's UTF-8 bytes, as four upper-case hex digits. */
  const crc16: (text: string) => string
  export default crc16
}

declare module "bakong-khqr/src/helper/cutString" {
  /** The first TLV field of `text`, and the text after it. */
  const cutString: (text: string) => { readonly tag: string; readonly value: string; readonly slicedString: string }
  export default cutString
}
