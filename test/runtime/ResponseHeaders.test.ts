/**
 * The server's response class (runtime/AccessLog.ts `ServerResponseWithIds`) gives every response the
 * headers the server chose when the request arrived, however the answer writes its head: headers given to
 * `writeHead` (with or without a reason), none at all (Node's implicit head), headers set one by one
 * before, or raw ones. The answer's own headers win over the leading ones, as they did when the server set
 * the leading ones with `setHeader` first, and no header is sent twice.
 */
import { createServer, request as httpRequest, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requestClasses, type ServerRequest, ServerResponseWithIds } from "../../runtime/AccessLog.ts"

const answers: Record<string, (response: ServerResponse) => void> = {
  "/object": (response) => {
    response.writeHead(200, { "content-type": "application/json" })
    response.end("{}")
  },
  "/reason": (response) => {
    response.writeHead(201, "Made", { "content-type": "text/plain" })
    response.end("made")
  },
  "/implicit": (response) => {
    response.statusCode = 202
    response.end("implicit")
  },
  "/set-before": (response) => {
    response.setHeader("cache-control", "no-store")
    response.writeHead(200, { "content-type": "text/plain" })
    response.end("set")
  },
  "/own-id": (response) => {
    response.writeHead(200, { "x-request-id": "the-answer's-own" })
    response.end()
  },
  "/raw": (response) => {
    response.writeHead(200, ["content-type", "text/plain", "x-raw", "yes"])
    response.end("raw")
  }
}

let server: Server<typeof ServerRequest, typeof ServerResponseWithIds>
let port: number

beforeAll(async () => {
  server = createServer(requestClasses, (request, response) => {
    expect(response).toBeInstanceOf(ServerResponseWithIds)
    ;(response as ServerResponseWithIds).leadingHeaders = { "api-version": "2026-11-26", "x-request-id": "req-1" }
    answers[request.url!]!(response)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** The status and the raw header lines of `path`'s answer. */
const fetchRaw = (path: string) =>
  new Promise<{ readonly status: number; readonly lines: ReadonlyArray<readonly [string, string]> }>((resolve, reject) => {
    const sent = httpRequest({ host: "127.0.0.1", port, path }, (response) => {
      const lines: Array<readonly [string, string]> = []
      for (let i = 0; i < response.rawHeaders.length; i += 2) lines.push([response.rawHeaders[i]!.toLowerCase(), response.rawHeaders[i + 1]!])
      response.resume()
      response.on("end", () => resolve({ status: response.statusCode!, lines }))
    })
    sent.on("error", reject)
    sent.end()
  })

const valuesOf = (lines: ReadonlyArray<readonly [string, string]>, name: string) => lines.filter(([key]) => key === name).map(([, value]) => value)

describe("the headers every response carries", () => {
  it.each([
    ["/object", 200, { "content-type": "application/json" }],
    ["/reason", 201, { "content-type": "text/plain" }],
    ["/implicit", 202, {}],
    ["/set-before", 200, { "cache-control": "no-store", "content-type": "text/plain" }],
    ["/raw", 200, { "content-type": "text/plain", "x-raw": "yes" }]
  ])("%s: the leading headers once each, beside the answer's own", async (path, status, own) => {
    const { status: answered, lines } = await fetchRaw(path)
    expect(answered).toBe(status)
    expect(valuesOf(lines, "api-version")).toEqual(["2026-11-26"])
    expect(valuesOf(lines, "x-request-id")).toEqual(["req-1"])
    for (const [name, value] of Object.entries(own)) expect(valuesOf(lines, name)).toEqual([value])
  })

  it("an answer's own header of the same name wins, sent once", async () => {
    const { lines } = await fetchRaw("/own-id")
    expect(valuesOf(lines, "x-request-id")).toEqual(["the-answer's-own"])
    expect(valuesOf(lines, "api-version")).toEqual(["2026-11-26"])
  })

  it("the leading headers come first, in the order the server gave them", async () => {
    const { lines } = await fetchRaw("/object")
    expect(lines.slice(0, 3).map(([name]) => name)).toEqual(["api-version", "x-request-id", "content-type"])
  })
})
