/**
 * A local fake of a messaging provider (Telegram's Bot API; the other channels' providers are faked
 * faithfully in ProviderFakes.ts): a node:http server on 127.0.0.1 that records every request and answers the n-th one
 * as the test says (status, headers, JSON body).
 */
import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

export interface ProviderRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: any
}

export interface ProviderAnswer {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: unknown
}

export interface FakeProviderShape {
  readonly baseUrl: string
  readonly requests: Array<ProviderRequest>
  /** How the n-th request (from 1) is answered; 200 `{ ok: true }` unless set. */
  answer: (n: number) => ProviderAnswer
  readonly reset: () => void
}

export class FakeProvider extends Context.Tag("test/FakeProvider")<FakeProvider, FakeProviderShape>() {
  static readonly layer = Layer.scoped(
    FakeProvider,
    Effect.acquireRelease(
      Effect.async<{ fake: FakeProviderShape; close: () => Promise<void> }>((resume) => {
        const fake: FakeProviderShape = {
          baseUrl: "",
          requests: [],
          answer: () => ({ status: 200, body: { ok: true, result: {} } }),
          reset: () => {
            fake.requests.length = 0
            fake.answer = () => ({ status: 200, body: { ok: true, result: {} } })
          }
        }
        const server = createServer((request, response) => {
          const chunks: Array<Buffer> = []
          request.on("data", (chunk: Buffer) => chunks.push(chunk))
          request.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            let body: unknown = text
            try {
              body = JSON.parse(text)
            } catch {
              // kept as text
            }
            fake.requests.push({ method: request.method ?? "", path: request.url ?? "/", headers: request.headers, body })
            const answer = fake.answer(fake.requests.length)
            response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
            response.end(JSON.stringify(answer.body ?? { ok: answer.status < 300 }))
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          ;(fake as { baseUrl: string }).baseUrl = `http://127.0.0.1:${port}`
          resume(Effect.succeed({
            fake,
            close: () => new Promise<void>((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
          }))
        })
      }),
      ({ close }) => Effect.promise(close)
    ).pipe(Effect.map(({ fake }) => fake))
  )
}
