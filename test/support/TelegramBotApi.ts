/**
 * A local fake of Telegram's Bot API (https://core.telegram.org/bots/api) for browser suites: `POST
 * /bot<token>/sendMessage` with a JSON `{chat_id, text}` body, answered as Telegram answers — the sent
 * Message on success, `401 Unauthorized` for another bot's token, `400 Bad Request: chat not found` for a
 * chat the bot is not in, `400 Bad Request: message text is empty` — so a client that drifts from the real
 * API fails its test. Every accepted message is kept, in order.
 */
import { Effect } from "effect"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface SentTelegram {
  readonly chatId: string
  readonly text: string
}

const reply = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const refusal = (response: ServerResponse, status: number, description: string) =>
  reply(response, status, { ok: false, error_code: status, description })

/** The fake, on 127.0.0.1, for a bot with `token` that is a member of `chats`. */
export const telegramBotApi = (token: string, chats: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly baseUrl: string; readonly sent: Array<SentTelegram>; readonly close: () => void }>((resume) => {
      const sent: Array<SentTelegram> = []
      let messageId = 0
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? "")
          if (match === null) return refusal(response, 404, "Not Found")
          if (match[1] !== token) return refusal(response, 401, "Unauthorized")
          if (match[2] !== "sendMessage") return refusal(response, 404, "Not Found: method not found")
          if (request.method !== "POST" || !(request.headers["content-type"] ?? "").startsWith("application/json")) {
            return refusal(response, 400, "Bad Request: message text is empty")
          }
          let body: { chat_id?: unknown; text?: unknown }
          try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
          } catch {
            return refusal(response, 400, "Bad Request: can't parse JSON")
          }
          const chatId = String(body.chat_id ?? "")
          if (typeof body.text !== "string" || body.text.trim() === "") return refusal(response, 400, "Bad Request: message text is empty")
          if (!chats.includes(chatId)) return refusal(response, 400, "Bad Request: chat not found")
          sent.push({ chatId, text: body.text })
          reply(response, 200, {
            ok: true,
            result: {
              message_id: ++messageId,
              from: { id: Number(token.split(":")[0]), is_bot: true, first_name: "Store alerts", username: "store_alerts_bot" },
              chat: { id: Number(chatId), title: "Riverside staff", type: "supergroup" },
              date: Math.floor(Date.now() / 1000),
              text: body.text
            }
          })
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          sent,
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        })))
    }),
    (fake) => Effect.sync(fake.close)
  )
