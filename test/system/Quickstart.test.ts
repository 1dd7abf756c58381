/**
 * The quickstart as a developer meets it: the README's section and the API reference's first page are
 * the same text, and its commands, as written, work. The service is started by the suite (with
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, as the quickstart's first command starts it); the bash blocks run
 * in order in one shell, from a scratch package that depends on this one, with only `KHQR` (where the
 * service answers) and `RECEIVER_PORT` (a free port) set; the webhook receiver they start must print
 * both events verified. The TypeScript block runs with tsx and type-checks with tsc in the same package.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { promisify } from "node:util"
import { QUICKSTART_MARKDOWN } from "../../domain/Quickstart.ts"
import { checkoutRoot, makeScratchPackage } from "../support/ScratchPackage.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const run = promisify(execFile)

const readmeQuickstart = () => {
  const readme = readFileSync(join(checkoutRoot, "README.md"), "utf8")
  const start = readme.indexOf("## Quickstart\n")
  const end = readme.indexOf("\n## ", start + 1)
  // The section ends with its text; the blank line before the next heading is the README's.
  return readme.slice(start, end)
}

const fencedBlocks = (markdown: string, language: string): Array<string> =>
  Array.from(markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm))
    .filter((match) => match[1] === language)
    .map((match) => match[2]!)

/** A program of a merchant's own, on the console client: its package imports it by the exported name. */
const CONSOLE_PROGRAM = `import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { makeApiClient } from "khqr-merchant-platform/client"
import { makeConsoleClient } from "khqr-merchant-platform/console-client"

const KHQR = process.env.KHQR ?? "http://localhost:3000"

const program = Effect.gen(function*() {
  const visitor = yield* makeApiClient(KHQR)
  const { access_token } = yield* visitor.auth.register({
    payload: { email: "console@example.com", password: "correct horse battery staple" }
  })
  const owner = yield* makeApiClient(KHQR, { credential: access_token })
  const store = yield* owner.stores.create({ payload: { name: "Console Store" } })
  const consoleClient = yield* makeConsoleClient({ baseUrl: KHQR, sessionToken: access_token })
  const page = yield* consoleClient.ListPayments({ store_id: store.id, livemode: false })
  console.log(\`console: \${page.data.length} test payments in \${store.name}\`)
})

Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)))
`

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

describe("the quickstart", () => {
  it_is_the_same_text()

  layer(testAppLayer({ webhookAllowPrivateNetworks: true }), { timeout: 240_000, excludeTestServices: true })(
    "against a started service",
    (it) => {
      it.effect("runs as written: a payment paid and refunded, both webhooks verified with standardwebhooks", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const blocks = fencedBlocks(QUICKSTART_MARKDOWN, "bash")
          const [start, ...commands] = blocks
          // The first block starts the service; the suite has started it, configured the same way.
          expect(start).toContain("WEBHOOK_ALLOW_PRIVATE_NETWORKS=true npm start")
          const scratch = makeScratchPackage(["standardwebhooks", "effect", "@effect", "@types", "fast-check", "pure-rand"])
          const receiverPort = yield* Effect.promise(freePort)
          let output = ""
          const shell = spawn("bash", ["-c", ["set -euo pipefail", ...commands].join("\n")], {
            cwd: scratch.directory,
            env: { ...process.env, KHQR: app.baseUrl, RECEIVER_PORT: String(receiverPort) },
            detached: true,
            stdio: ["ignore", "pipe", "pipe"]
          })
          shell.stdout.on("data", (chunk) => output += chunk)
          shell.stderr.on("data", (chunk) => output += chunk)
          try {
            const exitCode = yield* Effect.promise(() => new Promise<number | null>((resolve) => shell.once("exit", resolve)))
            expect(exitCode, output).toBe(0)
            expect(output).toMatch(/"status":"paid"/)
            expect(output).toMatch(/"status":"succeeded"/)
            // Deliveries are asynchronous: wait for the receiver (still running in the background) to print both.
            const deadline = Date.now() + 60_000
            while (!/verified payment\.refunded/.test(output) && Date.now() < deadline) {
              yield* Effect.sleep("200 millis")
            }
            expect(output).toMatch(/verified payment\.completed pay_\w+ paid/)
            expect(output).toMatch(/verified payment\.refunded pay_\w+ partially_refunded/)
            expect(output).not.toMatch(/rejected a delivery/)
          } finally {
            // The shell and the receiver it left running in the background are one process group.
            try {
              process.kill(-shell.pid!, "SIGTERM")
            } catch {
              // already gone
            }
            scratch.remove()
          }
        }), 120_000)

      it.effect("its typed-client program, and one on the console client, run from a package that depends on this one and type-check", () =>
        Effect.gen(function*() {
          const app = yield* TestApp
          const [program] = fencedBlocks(QUICKSTART_MARKDOWN, "ts")
          const scratch = makeScratchPackage(["effect", "@effect", "@types", "fast-check", "pure-rand", "msgpackr", "multipasta", "find-my-way-ts"])
          const tsx = (file: string) =>
            Effect.promise(() =>
              run(join(checkoutRoot, "node_modules", ".bin", "tsx"), [file], {
                cwd: scratch.directory,
                env: { ...process.env, KHQR: app.baseUrl, RECEIVER_PORT: "9" }
              })
            )
          try {
            writeFileSync(join(scratch.directory, "quickstart.ts"), program!)
            writeFileSync(join(scratch.directory, "console.ts"), CONSOLE_PROGRAM)
            expect((yield* tsx("quickstart.ts")).stdout).toMatch(/^pay_\w+ paid; refund re_\w+ succeeded; webhooks signed with whsec_…/)
            expect((yield* tsx("console.ts")).stdout).toBe("console: 0 test payments in Console Store\n")
            writeFileSync(
              join(scratch.directory, "tsconfig.json"),
              JSON.stringify({
                compilerOptions: {
                  target: "ES2022",
                  lib: ["ES2023", "DOM"],
                  module: "ESNext",
                  moduleResolution: "bundler",
                  allowImportingTsExtensions: true,
                  noEmit: true,
                  strict: true,
                  skipLibCheck: true,
                  types: ["node"]
                },
                files: ["quickstart.ts", "console.ts"]
              })
            )
            const typecheck = yield* Effect.promise(() =>
              run(join(checkoutRoot, "node_modules", ".bin", "tsc"), ["-p", "."], { cwd: scratch.directory })
                .then(() => "")
                .catch((failure) => String(failure.stdout))
            )
            expect(typecheck).toBe("")
          } finally {
            scratch.remove()
          }
        }), 240_000)
    }
  )
})

function it_is_the_same_text() {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("in the README and the reference", (it) => {
    it.effect("is the README's first section and the reference's first page, word for word", () =>
      Effect.gen(function*() {
        expect(readmeQuickstart()).toBe(QUICKSTART_MARKDOWN)
        const { fetch } = yield* TestApp
        const document = yield* Effect.promise(() => fetch("/openapi.json").then((response) => response.json() as Promise<any>))
        expect(document.info.description).toContain(QUICKSTART_MARKDOWN.trim())
      }))
  })
}
