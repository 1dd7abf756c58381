/**
 * Requests that Node's HTTP parser refuses before any handler sees them — headers over the size limit,
 * a request that is not HTTP, one too slow to arrive — are answered in the shared error envelope, with
 * the status Node would have used, instead of Node's bare status line. The connection then closes: what
 * follows on it cannot be read as a request.
 */
import { maxHeaderSize, type Server } from "node:http"
import type { Duplex } from "node:stream"
import type { ErrorCode } from "../domain/Errors.ts"

interface ClientRefusal {
  readonly status: number
  readonly reason: string
  readonly code: ErrorCode
  readonly message: string
}

const refusalOf = (errorCode: string | undefined, maxHeaderSize: number): ClientRefusal => {
  switch (errorCode) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        reason: "Request Header Fields Too Large",
        code: "request_header_fields_too_large",
        message: `The request's headers are larger than the ${maxHeaderSize} bytes accepted; send fewer or shorter headers`
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        reason: "Request Timeout",
        code: "request_timeout",
        message: "The request did not arrive in time"
      }
    default:
      return {
        status: 400,
        reason: "Bad Request",
        code: "invalid_request",
        message: "The request could not be read as HTTP/1.1"
      }
  }
}

/** The whole answer, status line to body, as written on the socket. */
export const clientErrorResponse = (errorCode: string | undefined, maxHeaderSize: number): string => {
  const refusal = refusalOf(errorCode, maxHeaderSize)
  const body = JSON.stringify({ error: { code: refusal.code, message: refusal.message } })
  return `HTTP/1.1 ${refusal.status} ${refusal.reason}\r\n` +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    "X-Content-Type-Options: nosniff\r\n" +
    "Connection: close\r\n\r\n" +
    body
}

/**
 * Answers the parser's refusals on `server` as Node does (only while nothing was written on the
 * connection yet, so a response in progress is never corrupted), in the envelope.
 */
export const answerClientErrors = (server: Server): void => {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex & { readonly bytesWritten?: number }) => {
    if (error.code !== "ECONNRESET" && socket.writable && (socket.bytesWritten ?? 0) === 0) {
      // Closed once the answer is flushed: the client need not end its side first.
      socket.end(clientErrorResponse(error.code, maxHeaderSize), () => socket.destroy())
    } else {
      socket.destroy()
    }
  })
}
