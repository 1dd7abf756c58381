/** Types of scripts/build.mjs for the TypeScript that imports it (the benches). */
export declare const ROOT: string
export declare const ENTRIES: ReadonlyArray<string>
export declare const bundleOf: (entry: string) => string
export declare const newestSource: () => number
export declare const isStale: (entry: string) => boolean
export declare const buildAll: () => Promise<void>
export declare const startNodeFlags: () => Array<string>
