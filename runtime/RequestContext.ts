/**
 * How small the context of an API request is, and why it matters.
 *
 * Effect keeps a fiber's services in one immutable map, and every `provideService` — each span a
 * service function opens (`Effect.fn`), the request guard, the router, the HttpApi's handler and
 * security middleware — copies that whole map. The server runs each request in the context the HTTP
 * layer was built in: every service of the application, about 64 entries, copied 9 to 16 times per
 * request before these measures. The copies were a large share of what a request allocates.
 *
 * 1. The server is built in the framework's context (runtime/Http.ts `servedInFrameworkContext`), and
 *    of that only what handling a request reads (`isRequestEntry`: not the SQL client, the cluster or the
 *    process-level platform services): a request runs without the application's services in its context. The HttpApi's handlers do not read
 *    them from there: an HttpApi group takes the services it uses when it is built and adds its own build
 *    context back around each of its handlers. The routes outside the HttpApi (pages, documents, the
 *    console), which read theirs per request, get them from the request middleware
 *    (`withApplicationServicesOf`).
 * 2. `builtOn(…tags)`: a group built on only the services it names captures only those, so that what
 *    its handlers run in (and copy) holds a handful of entries instead of every service. The tags must
 *    cover everything the group requires, or the layer does not typecheck.
 * 3. `builtOnFramework(…tags)`: the HttpApi itself (HttpLayerRouter.addHttpApi) merges the context it was
 *    built in into every request's, so it is built on the framework's entries and the services named
 *    (the API's security middleware) only; the groups' handlers bring their own.
 */
import { CommandExecutor, Terminal, Worker } from "@effect/platform"
import { Context, Effect, Layer, Scope } from "effect"

/**
 * The framework's entries that handling a request reads from its context: the HTTP platform (responses
 * from files, ETags, the body size limit), the router, the layer's scope, and the HttpApi's groups and
 * router while the API is built. Everything else the application was built with — the SQL client, the
 * cluster, the process-level platform services (commands, terminal, workers), the layer memo map — is
 * captured by the services that use it when they are built, and kept out of the request's context, which
 * every `provideService` of a request copies whole.
 */
const notPerRequest: ReadonlySet<string> = new Set([
  CommandExecutor.CommandExecutor.key,
  Terminal.Terminal.key,
  Worker.WorkerManager.key
])
const isRequestEntry = (key: string): boolean =>
  key === Scope.Scope.key || (key.startsWith("@effect/platform/") && !notPerRequest.has(key))

/**
 * The application's services in `built` (the context the request middleware was built in), as a function
 * that adds them to a request's handling: for the routes outside the HttpApi (pages, documents, the
 * console), which read the services they use (the SQL client among them) from the request's context
 * rather than capturing them.
 */
export const withApplicationServicesOf = (built: Context.Context<never>) => {
  const application = new Map<string, unknown>()
  for (const [key, value] of built.unsafeMap) if (!isRequestEntry(key)) application.set(key, value)
  const services = Context.unsafeMake<never>(application)
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.mapInputContext(effect, (context: Context.Context<R>) => Context.merge(context, services))
}

/**
 * Builds `layer` in the context `narrow` makes of the one it is built in, in the application's own layer
 * memo map, so that the HttpApi router it registers with is the one the API is served from.
 */
const builtInNarrowed = <A, E, R>(layer: Layer.Layer<A, E, R>, narrow: (context: Context.Context<R>) => Context.Context<R>) =>
  Layer.scopedContext(Effect.gen(function*() {
    const scope = yield* Effect.scope
    const memoMap = yield* Layer.CurrentMemoMap
    const narrowed = narrow(yield* Effect.context<R>())
    return yield* Effect.mapInputContext(Layer.buildWithMemoMap(layer, memoMap, scope), () => narrowed)
  })) as Layer.Layer<A, E, R>

/**
 * Builds `layer` (an HttpApi group) in a context holding only `tags` (and what building layers needs),
 * so that the group captures, and its handlers copy, only those.
 */
export const builtOn = <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags) =>
<A, E, R>(
  layer: Layer.Layer<A, E, R> & ([Exclude<R, Context.Tag.Identifier<Tags[number]>>] extends [never] ? unknown
    : { readonly "services the layer requires and the tags do not name": Exclude<R, Context.Tag.Identifier<Tags[number]>> })
): Layer.Layer<A, E, R> => builtInNarrowed(layer, (context) => Context.pick(...tags)(context) as Context.Context<R>)

/**
 * Builds `layer` in its context with only the entries a request reads (`isRequestEntry`) and those `tags`
 * name: for the server and the HttpApi, whose build contexts become part of every request's.
 */
export const builtOnFramework = (...tags: ReadonlyArray<Context.Tag<any, any>>) =>
<A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => {
  const named = new Set(tags.map((tag) => tag.key))
  return builtInNarrowed(layer, (context) => {
    const kept = new Map<string, unknown>()
    for (const [key, value] of context.unsafeMap) if (isRequestEntry(key) || named.has(key)) kept.set(key, value)
    return Context.unsafeMake(kept) as Context.Context<R>
  })
}
