/**
 * A local webhook receiver for tests: a node:http server on 127.0.0.1 that records every request and
 * answers each path as the test tells it to (a status, a delay, a redirect), attempt by attempt.
 */
import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { randomBytes } from "node:crypto"

export interface ReceivedRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly receivedAt: number
}

export interface Answer {
  readonly status?: number
  /** Wait this long before answering (a slow receiver). */
  readonly delayMs?: number
  readonly headers?: Record<string, string>
}

/** How a path answers its n-th request (n from 1). */
export type Behaviour = (n: number) => Answer

export interface Receiver {
  readonly origin: string
  /** A fresh path with its own behaviour; the URL to register. */
  readonly route: (behaviour?: Behaviour) => { readonly url: string; readonly path: string }
  readonly requests: (path: string) => ReadonlyArray<ReceivedRequest>
  /** Requests to `path` that have arrived but not been answered yet. */
  readonly inFlight: (path: string) => number
  /** Waits until `path` has received `count` requests; fails after `timeoutMs`. */
  readonly waitFor: (path: string, count: number, timeoutMs?: number) => Effect.Effect<ReadonlyArray<ReceivedRequest>>
}

/** Starts a receiver for the scope; it closes (dropping open connections) when the scope ends. */
export const startReceiver = Effect.acquireRelease(
  Effect.async<{ receiver: Receiver; close: () => Promise<void> }>((resume) => {
    const received = new Map<string, Array<ReceivedRequest>>()
    const behaviours = new Map<string, Behaviour>()
    const pending = new Map<string, number>()
    const server = createServer((request, response: ServerResponse) => {
      const path = (request.url ?? "/").split("?")[0] ?? "/"
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const list = received.get(path) ?? []
        list.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), receivedAt: Date.now() })
        received.set(path, list)
        const answer: Answer = (behaviours.get(path) ?? (() => ({})))(list.length)
        pending.set(path, (pending.get(path) ?? 0) + 1)
        const respond = () => {
          pending.set(path, (pending.get(path) ?? 1) - 1)
          if (response.destroyed) return
          response.writeHead(answer.status ?? 200, { "content-type": "text/plain", ...answer.headers })
          response.end("ok")
        }
        if (answer.delayMs) setTimeout(respond, answer.delayMs).unref()
        else respond()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const origin = `http://127.0.0.1:${port}`
      const receiver: Receiver = {
        origin,
        route: (behaviour) => {
          const path = `/hooks/${randomBytes(6).toString("hex")}`
          if (behaviour) behaviours.set(path, behaviour)
          return { url: origin + path, path }
        },
        requests: (path) => received.get(path) ?? [],
        inFlight: (path) => pending.get(path) ?? 0,
        waitFor: (path, count, timeoutMs = 15_000) =>
          Effect.gen(function*() {
            const deadline = Date.now() + timeoutMs
            while ((received.get(path)?.length ?? 0) < count) {
              if (Date.now() > deadline) {
                return yield* Effect.dieMessage(
                  `expected ${count} requests to ${path} within ${timeoutMs} ms, got ${received.get(path)?.length ?? 0}`
                )
              }
              yield* Effect.sleep("25 millis")
            }
            return received.get(path) ?? []
          })
      }
      resume(Effect.succeed({
        receiver,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      }))
    })
  }),
  ({ close }) => Effect.promise(close)
).pipe(Effect.map(({ receiver }) => receiver))

export class TestReceiver extends Context.Tag("test/TestReceiver")<TestReceiver, Receiver>() {
  static readonly layer = Layer.scoped(TestReceiver, startReceiver)
}
