/**
 * A local SMTP server (smtp-server, the real protocol) for the mail tests and the mail benchmark: it
 * keeps every message it accepted, decoded enough to read (subject, text and HTML parts, links), and can
 * be told to refuse for a while (a 4xx answer) or be stopped and started again on the same port.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { type SMTPServerDataStream, SMTPServer } from "smtp-server"
import type { AppConfigShape } from "../../src/platform/Config.ts"

export interface ReceivedMail {
  readonly to: string
  readonly from: string
  readonly subject: string
  readonly messageId: string
  readonly text: string
  readonly html: string
  readonly receivedAt: number
}

export type SmtpMode = "accept" | "tempfail" | "reject"

export interface LocalSmtp {
  readonly url: string
  readonly port: number
  readonly received: Array<ReceivedMail>
  /** How the server answers the next messages: accept (250), tempfail (451) or reject (550). */
  mode: SmtpMode
  /** A wait before each message is answered, to keep deliveries in flight. */
  delayMs: number
  readonly to: (recipient: string) => ReadonlyArray<ReceivedMail>
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
}

const decodeQuotedPrintable = (body: string) =>
  Buffer.from(
    body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    "latin1"
  ).toString("utf8")

const wordBytes = (encoding: string, text: string) =>
  encoding.toLowerCase() === "b"
    ? Buffer.from(text, "base64")
    : Buffer.from(text.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1")

/** A header's encoded words (RFC 2047), joined before decoding: one character may be split across two words. */
const decodeWords = (value: string) =>
  value.replace(/(?:=\?utf-8\?[bq]\?[^?]*\?=\s*)+/gi, (run) =>
    Buffer.concat(Array.from(run.matchAll(/=\?utf-8\?([bq])\?([^?]*)\?=/gi), (word) => wordBytes(word[1]!, word[2]!))).toString("utf8"))

const headersOf = (block: string) => {
  const headers = new Map<string, string>()
  for (const line of block.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const at = line.indexOf(":")
    if (at > 0) headers.set(line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim())
  }
  return headers
}

const splitHead = (raw: string) => {
  const at = raw.search(/\r?\n\r?\n/)
  return at < 0 ? { head: raw, body: "" } : { head: raw.slice(0, at), body: raw.slice(at).replace(/^\r?\n\r?\n/, "") }
}

const decodeBody = (body: string, encoding: string | undefined) =>
  encoding?.toLowerCase() === "quoted-printable"
    ? decodeQuotedPrintable(body)
    : encoding?.toLowerCase() === "base64"
    ? Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
    : body

/** The text and HTML parts of a message as nodemailer writes it (single part, or multipart/alternative). */
export const parseMessage = (raw: string) => {
  const { body, head } = splitHead(raw)
  const headers = headersOf(head)
  const parts = { text: "", html: "" }
  const contentType = headers.get("content-type") ?? "text/plain"
  const boundary = contentType.match(/boundary="?([^";]+)"?/)?.[1]
  const sections = boundary === undefined
    ? [{ headers, body }]
    : body.split(`--${boundary}`).slice(1).filter((part) => !part.startsWith("--")).map((part) => {
      const section = splitHead(part.replace(/^\r?\n/, ""))
      return { headers: headersOf(section.head), body: section.body }
    })
  for (const section of sections) {
    const type = section.headers.get("content-type") ?? "text/plain"
    const decoded = decodeBody(section.body, section.headers.get("content-transfer-encoding"))
    if (type.startsWith("text/html")) parts.html = decoded
    else if (type.startsWith("text/plain")) parts.text = decoded
  }
  return {
    subject: decodeWords(headers.get("subject") ?? ""),
    messageId: headers.get("message-id") ?? "",
    ...parts
  }
}

export const linksIn = (text: string): ReadonlyArray<string> => text.match(/https?:\/\/[^\s<>"')]+/g) ?? []

const readStream = (stream: SMTPServerDataStream) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("latin1")))
    stream.on("error", reject)
  })

const smtpError = (message: string, responseCode: number) => Object.assign(new Error(message), { responseCode })

/** Starts the server on a free loopback port. */
export const startLocalSmtp = async (): Promise<LocalSmtp> => {
  let server: SMTPServer | undefined
  let port = 0
  const state: LocalSmtp = {
    url: "",
    port: 0,
    received: [],
    mode: "accept",
    delayMs: 0,
    to: (recipient) => state.received.filter((mail) => mail.to.toLowerCase() === recipient.toLowerCase()),
    stop: () =>
      new Promise<void>((resolve) => {
        const current = server
        server = undefined
        if (current === undefined) return resolve()
        // Open pooled connections are cut at once, as a crashed server would.
        for (const connection of current.connections) connection.close()
        current.close(() => resolve())
      }),
    start: () =>
      new Promise<void>((resolve, reject) => {
        const created = new SMTPServer({
          authOptional: true,
          disabledCommands: ["STARTTLS"],
          logger: false,
          onRcptTo: (_address, _session, callback) => {
            if (state.mode === "tempfail") return callback(smtpError("4.3.2 Try again later", 451))
            if (state.mode === "reject") return callback(smtpError("5.1.1 No such mailbox", 550))
            callback()
          },
          onData: (stream, session, callback) => {
            readStream(stream).then(async (raw) => {
              if (state.delayMs > 0) await new Promise((done) => setTimeout(done, state.delayMs))
              const parsed = parseMessage(raw)
              for (const recipient of session.envelope.rcptTo) {
                state.received.push({
                  to: recipient.address,
                  from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
                  receivedAt: Date.now(),
                  ...parsed
                })
              }
              callback(null, `Ok: queued as Q${state.received.length}`)
            }, (error: Error) => callback(error))
          }
        })
        created.on("error", () => undefined)
        created.server.once("error", reject)
        created.listen(port, "127.0.0.1", () => {
          const address = created.server.address()
          if (address !== null && typeof address === "object") port = address.port
          server = created
          resolve()
        })
      })
  }
  await state.start()
  Object.assign(state, { port, url: `smtp://127.0.0.1:${port}` })
  return state
}

export class TestSmtp extends Context.Tag("test/TestSmtp")<TestSmtp, LocalSmtp>() {
  static readonly layer = Layer.scoped(
    TestSmtp,
    Effect.acquireRelease(Effect.promise(startLocalSmtp), (smtp) => Effect.promise(() => smtp.stop()))
  )
}

/** Waits until `recipient` has received `count` mails; answers them. */
export const receivedBy = (smtp: LocalSmtp, recipient: string, count = 1, timeoutMs = 20_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const mails = smtp.to(recipient)
      if (mails.length >= count) return mails
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.dieMessage(`${recipient} received ${smtp.to(recipient).length} of ${count} mails in ${timeoutMs} ms`)
  })

/** Delivery to `url` with retries in fractions of a second, so a test sees several. */
export const fastMail = (url: string | undefined): AppConfigShape["mail"] => ({
  smtpUrl: url === undefined ? Option.none() : Option.some(Redacted.make(url)),
  from: "KHQR Test <no-reply@example.test>",
  retryFirstSeconds: 0.2,
  retryMaxSeconds: 0.4,
  giveUpHours: 1,
  timeoutSeconds: 2
})

