/**
 * The pinned webhook transport over TLS: a connection goes to the pinned address while the URL's host
 * name stays the TLS server name (SNI, and the certificate is checked against it) and the `Host` header;
 * without a pin it connects nowhere. The certificate is made for the test by openssl.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TLSSocket } from "node:tls"
import { makePinnedTransport } from "../../src/webhooks/Transport.ts"

const HOST = "hooks.example.test"
const PINNED_ADDRESS = "127.0.0.2"

/** A self-signed certificate for HOST (its own authority). */
const certificate = () => {
  const directory = mkdtempSync(join(tmpdir(), "webhook-tls-"))
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${HOST}`,
      "-addext", `subjectAltName=DNS:${HOST}`,
      "-keyout", join(directory, "key.pem"), "-out", join(directory, "cert.pem")
    ], { stdio: "ignore" })
    return { key: readFileSync(join(directory, "key.pem"), "utf8"), cert: readFileSync(join(directory, "cert.pem"), "utf8") }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

interface Seen {
  readonly servername: string | false | null
  readonly host: string | undefined
  readonly localAddress: string | undefined
}

const httpsReceiver = (tls: { key: string; cert: string }) =>
  Effect.acquireRelease(
    Effect.async<{ port: number; seen: Array<Seen>; close: () => Promise<void> }>((resume) => {
      const seen: Array<Seen> = []
      const server = createServer(tls, (request, response) => {
        const socket = request.socket as TLSSocket
        seen.push({ servername: socket.servername, host: request.headers.host, localAddress: socket.localAddress })
        request.resume()
        request.on("end", () => response.end("ok"))
      })
      server.listen(0, PINNED_ADDRESS, () =>
        resume(Effect.succeed({
          port: (server.address() as AddressInfo).port,
          seen,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
        })))
    }),
    ({ close }) => Effect.promise(close)
  )

describe("pinned webhook transport", () => {
  it.scoped("connects to the pinned address, keeping the host name for TLS and Host", () =>
    Effect.gen(function*() {
      const tls = certificate()
      const receiver = yield* httpsReceiver(tls)
      const transport = yield* makePinnedTransport({ ca: tls.cert })
      const url = new URL(`https://${HOST}:${receiver.port}/hook`)
      const post = transport.post(url, { "content-type": "application/json" }, "{}", 5_000)

      // Unpinned, the host is not looked up anywhere: nothing is sent.
      const unpinned = yield* post
      expect(unpinned).toMatchObject({ _tag: "Failed", cause: { code: "EUNCHECKED" } })
      expect(receiver.seen).toHaveLength(0)

      const answered = yield* transport.pinned(HOST, [PINNED_ADDRESS], post)
      expect(answered).toEqual({ _tag: "Answered", status: 200 })
      expect(receiver.seen).toEqual([{ servername: HOST, host: `${HOST}:${receiver.port}`, localAddress: PINNED_ADDRESS }])
    }))
})
