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
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return {
        status: 413,
        reason: "Payload Too Large",
        code: "payload_too_large",
        message: "The request's chunk extensions are larger than accepted"
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

/** A connection as Node's HTTP server keeps it: the response in progress on it, if any (Node's own field). */
type ClientSocket = Duplex & { readonly _httpMessage?: { readonly _headerSent?: boolean } | null }

/** How long a refused client may take to read the answer and close its side. */
const LINGER_MILLIS = 5_000

/**
 * Answers the parser's refusals on `server` as Node does (unless a response on the connection already
 * started, so that one is never corrupted), in the envelope.
 */
export const answerClientErrors = (server: Server): void => {
  const answered = new WeakSet<Duplex>()
  server.on("clientError", (error: NodeJS.ErrnoException, socket: ClientSocket) => {
    // The parser may report more than once for one connection: it is answered once.
    if (answered.has(socket)) return
    answered.add(socket)
    // As Node decides: an answer may go out unless a response on this connection already started (a
    // kept-alive connection has written earlier, finished responses).
    const inFlight = socket._httpMessage?._headerSent === true
    if (error.code === "ECONNRESET" || !socket.writable || inFlight) {
      socket.destroy()
      return
    }
    socket.end(clientErrorResponse(error.code, maxHeaderSize))
    // The rest of what the client sends (the remainder of an oversized request) is read and dropped:
    // closing a connection with unread data resets it, and the client could lose the answer before
    // reading its body. The connection closes when the client ends its side, or after a while.
    socket.removeAllListeners("data")
    socket.on("data", () => {})
    socket.once("end", () => socket.destroy())
    const linger = setTimeout(() => socket.destroy(), LINGER_MILLIS)
    linger.unref()
    socket.once("close", () => clearTimeout(linger))
  })
}
