/** Types of scripts/build.mjs for the TypeScript that imports it (the benches). */
export declare const ROOT: string
export declare const ENTRIES: ReadonlyArray<string>
export declare const CLI_ENTRY: string
export declare const bundleOf: (entry: string) => string
export declare const newestSource: () => number
export declare const isStale: (entry: string) => boolean
export declare const buildAll: () => Promise<void>
export declare const startNodeFlags: () => Array<string>
export declare const CONSOLE_ENTRY: string
export declare const CONSOLE_OUT: string
export declare const consoleIsStale: () => boolean
export interface ConsoleMetafile {
  readonly inputs: Record<string, { readonly bytes: number; readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }> }>
  readonly outputs: Record<string, {
    readonly bytes: number
    readonly entryPoint?: string
    readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string }>
    readonly inputs: Record<string, { readonly bytesInOutput: number }>
  }>
}
export declare const buildConsole: (outDir?: string) => Promise<ConsoleMetafile>
/** The entry script and every chunk it imports statically: what loads before the first screen. */
export declare const initialScripts: (metafile: ConsoleMetafile) => Array<string>
/** Their gzipped size in bytes. */
export declare const initialScriptsGzipped: (metafile: ConsoleMetafile) => number
/** The packages whose index the console's build reads as imports of their modules. */
export declare const BARRELS: ReadonlyArray<string>
/** A package's index namespaces: `Schema` → `effect/Schema`. */
export declare const namespacesOf: (pkg: string) => Map<string, string>
/** A source with its value imports from BARRELS turned into module imports. */
export declare const importModules: (source: string, namespaces: Map<string, Map<string, string>>) => string
/** A source with its HttpApi group definitions marked pure, for esbuild to drop the unused ones. */
export declare const markApiGroupsPure: (source: string) => string
/** The pages whose chunks the console's HTML preloads. */
export declare const PRELOADED_PAGES: ReadonlyArray<string>
/** The scripts the console's HTML names for fetching at once: the initial scripts and PRELOADED_PAGES' chunks. */
export declare const preloadedScripts: (metafile: ConsoleMetafile) => Array<string>
/** The command `npm start` runs for `entry`: [node, [its flags, scripts/start.mjs, entry]]. */
export declare const startCommand: (entry?: string) => [string, Array<string>]
/** Builds dist/ once if a source changed since the last build. */
export declare const buildIfStale: () => Promise<void>
