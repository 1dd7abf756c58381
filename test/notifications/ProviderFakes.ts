/**
 * Local fakes of the real messaging providers, each checking a request the way the provider does and
 * answering with the provider's own success and error bodies:
 *
 * - the WhatsApp Cloud API (`POST /{version}/{phone-number-id}/messages`, Bearer token, JSON);
 * - Twilio's Messages API (`POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, basic auth, form-encoded);
 * - signal-cli-rest-api (`POST /v2/send`, JSON).
 *
 * A request of the wrong shape gets the provider's own refusal, so a client that drifts from the real
 * API fails its test. `next` scripts the answer to the next accepted request (a refusal, a rate limit).
 */
import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export const WHATSAPP = { version: "v21.0", phoneNumberId: "106540352242922", token: "EAAJB-whatsapp-access-token" }
export const TWILIO = {
  accountSid: "AC00000000000000000000000000000001",
  authToken: "twilio-auth-token-0001",
  from: "+15017122661",
  messagingServiceSid: "MG00000000000000000000000000000001"
}
export const SIGNAL = { number: "+85510000001" }

export interface ProviderCall {
  readonly provider: "whatsapp" | "twilio" | "signal"
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The JSON body, or the form fields of Twilio's. */
  readonly body: any
}

export interface ScriptedAnswer {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body: unknown
}

export interface ProviderFakesShape {
  readonly baseUrl: string
  readonly calls: Array<ProviderCall>
  /** Answers for the next accepted requests, in order; then each provider's success. */
  readonly next: Array<ScriptedAnswer>
  readonly reset: () => void
}

const fbtrace = "AQ2x9v5Pq3rLmN0kT7yZbW1"

/** Meta's error envelope. */
export const whatsappError = (status: number, code: number, message: string, details: string): ScriptedAnswer => ({
  status,
  body: {
    error: {
      message: `(#${code}) ${message}`,
      type: "OAuthException",
      code,
      error_data: { messaging_product: "whatsapp", details },
      fbtrace_id: fbtrace
    }
  }
})

/** Twilio's error envelope. */
export const twilioError = (status: number, code: number, message: string, headers?: Record<string, string>): ScriptedAnswer => ({
  status,
  ...(headers === undefined ? {} : { headers }),
  body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }
})

const reply = (response: ServerResponse, answer: ScriptedAnswer) => {
  response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
  response.end(JSON.stringify(answer.body))
}

const whatsapp = (headers: IncomingHttpHeaders, phoneNumberId: string, body: any): ScriptedAnswer | "accepted" => {
  if (headers.authorization !== `Bearer ${WHATSAPP.token}`) {
    return {
      status: 401,
      body: { error: { message: "Invalid OAuth access token - Cannot parse access token", type: "OAuthException", code: 190, fbtrace_id: fbtrace } }
    }
  }
  if (phoneNumberId !== WHATSAPP.phoneNumberId) {
    return whatsappError(400, 100, "Invalid parameter", `Unsupported post request. Object with ID '${phoneNumberId}' does not exist`)
  }
  const valid = typeof body === "object" && body !== null && body.messaging_product === "whatsapp" && body.type === "text" &&
    typeof body.to === "string" && body.to.length > 0 && typeof body.text?.body === "string" && body.text.body.length > 0
  return valid ? "accepted" : whatsappError(400, 100, "Invalid parameter", "Parameter messaging_product, to, type or text is missing or invalid")
}

const twilio = (headers: IncomingHttpHeaders, accountSid: string, form: Record<string, string>): ScriptedAnswer | "accepted" => {
  const expected = `Basic ${Buffer.from(`${TWILIO.accountSid}:${TWILIO.authToken}`).toString("base64")}`
  if (headers.authorization !== expected || accountSid !== TWILIO.accountSid) return twilioError(401, 20003, "Authenticate")
  if (!String(headers["content-type"]).startsWith("application/x-www-form-urlencoded")) {
    return twilioError(400, 21604, "A 'To' phone number is required.")
  }
  if (!form.To) return twilioError(400, 21604, "A 'To' phone number is required.")
  if (!form.From && !form.MessagingServiceSid) return twilioError(400, 21603, "A 'From' phone number is required.")
  if (!form.Body) return twilioError(400, 21602, "Message body is required.")
  return "accepted"
}

const signal = (body: any): ScriptedAnswer | "accepted" => {
  if (typeof body !== "object" || body === null) return { status: 400, body: { error: "Couldn't process request - invalid request" } }
  if (!Array.isArray(body.recipients) || body.recipients.length === 0) {
    return { status: 400, body: { error: "Couldn't process request - please provide at least one recipient" } }
  }
  if (typeof body.number !== "string" || body.number === "") {
    return { status: 400, body: { error: "Couldn't process request - please provide a valid number" } }
  }
  if (body.number !== SIGNAL.number) return { status: 400, body: { error: `User ${body.number} is not registered.\n` } }
  return typeof body.message === "string" ? "accepted" : { status: 400, body: { error: "Couldn't process request - invalid request" } }
}

const successOf = (call: ProviderCall): ScriptedAnswer => {
  switch (call.provider) {
    case "whatsapp":
      return {
        status: 200,
        body: {
          messaging_product: "whatsapp",
          contacts: [{ input: call.body.to, wa_id: String(call.body.to).replace(/\D/g, "") }],
          messages: [{ id: "wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA" }]
        }
      }
    case "twilio":
      return {
        status: 201,
        body: {
          account_sid: TWILIO.accountSid,
          api_version: "2010-04-01",
          body: call.body.Body,
          date_created: "Thu, 26 Nov 2026 06:30:00 +0000",
          date_sent: null,
          date_updated: "Thu, 26 Nov 2026 06:30:00 +0000",
          direction: "outbound-api",
          error_code: null,
          error_message: null,
          from: call.body.From ?? null,
          messaging_service_sid: call.body.MessagingServiceSid ?? null,
          num_media: "0",
          num_segments: "1",
          price: null,
          price_unit: "USD",
          sid: "SM1f0e8ae6ade43cb3c0ce4525424e404f",
          status: "queued",
          subresource_uris: {
            media: `/2010-04-01/Accounts/${TWILIO.accountSid}/Messages/SM1f0e8ae6ade43cb3c0ce4525424e404f/Media.json`
          },
          to: call.body.To,
          uri: `/2010-04-01/Accounts/${TWILIO.accountSid}/Messages/SM1f0e8ae6ade43cb3c0ce4525424e404f.json`
        }
      }
    case "signal":
      return { status: 201, body: { timestamp: "1795674600000" } }
  }
}

export class ProviderFakes extends Context.Tag("test/ProviderFakes")<ProviderFakes, ProviderFakesShape>() {
  static readonly layer = Layer.scoped(
    ProviderFakes,
    Effect.acquireRelease(
      Effect.async<{ fakes: ProviderFakesShape; close: () => Promise<void> }>((resume) => {
        const fakes: ProviderFakesShape = {
          baseUrl: "",
          calls: [],
          next: [],
          reset: () => {
            fakes.calls.length = 0
            fakes.next.length = 0
          }
        }
        const server = createServer((request, response) => {
          const chunks: Array<Buffer> = []
          request.on("data", (chunk: Buffer) => chunks.push(chunk))
          request.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            const path = request.url ?? "/"
            const whatsappPath = path.match(/^\/whatsapp\/(v\d+\.\d+)\/([^/]+)\/messages$/)
            const twilioPath = path.match(/^\/twilio\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/)
            let call: ProviderCall
            let verdict: ScriptedAnswer | "accepted"
            if (request.method === "POST" && whatsappPath !== null && whatsappPath[1] === WHATSAPP.version) {
              const body = (() => {
                try {
                  return JSON.parse(text)
                } catch {
                  return undefined
                }
              })()
              call = { provider: "whatsapp", path, headers: request.headers, body }
              verdict = whatsapp(request.headers, decodeURIComponent(whatsappPath[2]!), body)
            } else if (request.method === "POST" && twilioPath !== null) {
              const form = Object.fromEntries(new URLSearchParams(text))
              call = { provider: "twilio", path, headers: request.headers, body: form }
              verdict = twilio(request.headers, decodeURIComponent(twilioPath[1]!), form)
            } else if (request.method === "POST" && path === "/signal/v2/send") {
              const body = (() => {
                try {
                  return JSON.parse(text)
                } catch {
                  return undefined
                }
              })()
              call = { provider: "signal", path, headers: request.headers, body }
              verdict = signal(body)
            } else {
              response.writeHead(404, { "content-type": "text/plain" })
              response.end("404 page not found")
              return
            }
            fakes.calls.push(call)
            reply(response, verdict !== "accepted" ? verdict : fakes.next.shift() ?? successOf(call))
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          ;(fakes as { baseUrl: string }).baseUrl = `http://127.0.0.1:${port}`
          resume(Effect.succeed({
            fakes,
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          }))
        })
      }),
      ({ close }) => Effect.promise(close)
    ).pipe(Effect.map(({ fakes }) => fakes))
  )
}
