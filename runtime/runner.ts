/**
 * Entry point of a shard runner (`tsx runtime/runner.ts`): hosts the entities and singletons of the shards
 * it holds, on the PostgreSQL at DATABASE_URL (required) shared with the other runners and the API nodes.
 * Reachable by the other processes at RUNNER_HOST:RUNNER_PORT; no public HTTP (an optional `GET /health`
 * on RUNNER_HEALTH_PORT). SIGINT/SIGTERM hand its shards back (the others take them at once), then exit.
 */
import { runnerProgram } from "./App.ts"
import { launch } from "./Launch.ts"

launch(runnerProgram)
