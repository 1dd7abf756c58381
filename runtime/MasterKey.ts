/**
 * The master key for encryption at rest: MASTER_KEY when set; otherwise, outside production, a key
 * generated once into DATA_DIR (with a warning), so a local install works with no setup and keeps
 * reading its own secrets after a restart.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { MasterKey } from "../src/platform/Crypto.ts"
import { AppConfig, ConfigurationError } from "../src/platform/Config.ts"

const KEY_FILE = "master.key"

const loadOrCreateKeyFile = (dataDir: string) =>
  Effect.gen(function*() {
    const path = resolve(join(dataDir, KEY_FILE))
    if (existsSync(path)) {
      const bytes = Buffer.from(readFileSync(path, "utf8").trim(), "base64")
      if (bytes.length !== 32) {
        return yield* Effect.fail(new ConfigurationError(`Configuration error: ${path} does not hold a 32-byte base64 key`))
      }
      return new Uint8Array(bytes)
    }
    const key = randomBytes(32)
    mkdirSync(resolve(dataDir), { recursive: true })
    // "wx": never overwrite a key another process wrote a moment ago.
    yield* Effect.try({
      try: () => writeFileSync(path, key.toString("base64") + "\n", { mode: 0o600, flag: "wx" }),
      catch: (cause) => cause
    }).pipe(Effect.catchAll(() => Effect.void))
    yield* Effect.logWarning(
      `MASTER_KEY is not set: generated one into ${path}. Set MASTER_KEY in production; losing this file loses the encrypted secrets.`
    )
    return new Uint8Array(Buffer.from(readFileSync(path, "utf8").trim(), "base64"))
  })

export const MasterKeyLive = Layer.effect(
  MasterKey,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.masterKey)) return { key: Redacted.value(config.masterKey.value) }
    if (config.production) {
      return yield* Effect.fail(new ConfigurationError("Configuration error: MASTER_KEY is required when NODE_ENV=production"))
    }
    return { key: yield* loadOrCreateKeyFile(config.dataDir) }
  })
)
