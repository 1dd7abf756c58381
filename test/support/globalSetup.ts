/**
 * Before any test file runs: dist/ (the service's bundles and the console's web app) is built if a source
 * changed since the last build, as `npm start` would, once, so suites starting services or browsers side
 * by side never rebuild it under each other's feet; and the PostgreSQL database every suite's database is
 * copied from, migrated.
 */
import { buildIfStale } from "../../scripts/build.mjs"
import { prepareTemplateDatabase } from "./TemplateDatabase.ts"

export default async function setup() {
  await Promise.all([buildIfStale(), prepareTemplateDatabase()])
}
