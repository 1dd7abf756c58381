/**
 * Entry point of the all-in-one process (`npm start`): embedded database unless DATABASE_URL is set,
 * a single runner, HTTP on PORT. SIGINT/SIGTERM interrupt the program, which closes the server
 * (in-flight requests finish), then the cluster, then the database.
 */
import { program } from "./App.ts"
import { launch } from "./Launch.ts"

launch(program)
