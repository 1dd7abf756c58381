/**
 * Operator commands against the service's database, with the service's own configuration (the same
 * environment variables, DATABASE_URL or the embedded database under DATA_DIR; migrations run first):
 *
 *   npm run admin -- verify-email <address>   mark a PLATFORM_ADMIN_EMAILS address verified
 *
 * On the embedded database, stop the service first: its data directory serves one process at a time.
 */
import { Console, Effect, Layer } from "effect"
import { DatabaseLive } from "../runtime/Database.ts"
import { launch } from "../runtime/Launch.ts"
import { MigrationsLive } from "../runtime/Migrations.ts"
import { verifyPlatformAdminEmail } from "../src/accounts/Operator.ts"
import { AppConfig } from "../src/platform/Config.ts"

const USAGE = "usage: npm run admin -- verify-email <address>"

const [command, address, ...rest] = process.argv.slice(2)

const program = Effect.gen(function*() {
  const outcome = yield* verifyPlatformAdminEmail(address!).pipe(Effect.either)
  if (outcome._tag === "Left") {
    yield* Console.error(outcome.left.message)
    // Set, not exited with: the database (the embedded server too) still closes on the way out.
    process.exitCode = 1
    return
  }
  yield* Console.log(outcome.right)
}).pipe(Effect.provide(MigrationsLive.pipe(Layer.provideMerge(DatabaseLive), Layer.provideMerge(AppConfig.layer))))

if (command !== "verify-email" || address === undefined || rest.length > 0) {
  console.error(USAGE)
  process.exitCode = 2
} else {
  launch(program)
}
