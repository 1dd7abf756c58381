/**
 * Entry point of an API node (`tsx runtime/api.ts`): the public HTTP API on PORT, with client-only
 * sharding — every entity message goes to the runner that owns its shard. Needs DATABASE_URL (the
 * PostgreSQL the runners use) and at least one runner to change anything.
 */
import { apiProgram } from "./App.ts"
import { launch } from "./Launch.ts"

launch(apiProgram)
