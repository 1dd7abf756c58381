/**
 * The console's pages. Each area lists its own in `pages/<area>/routes.tsx`; this file only joins the
 * lists (one line an area). The shell shows the first page whose pattern matches the path, and builds the
 * side menu from the pages that have a `nav` entry, grouped by section in SECTIONS order.
 *
 * `lazyPage` (route.ts) puts each page's code in its own chunk, so the first screen carries only the shell
 * and its own page; the others are fetched while the browser is idle after it (`preloadEveryPage`).
 */
import { accountRoutes } from "./pages/account/routes.tsx"
import { coreRoutes } from "./pages/core/routes.tsx"
import { linksRoutes } from "./pages/links/routes.tsx"
import { settingsRoutes } from "./pages/settings/routes.tsx"
import { engagementRoutes } from "./pages/engagement/routes.tsx"
import { gamesRoutes } from "./pages/games/routes.tsx"
import { insightsRoutes } from "./pages/insights/routes.tsx"
import { integrationsRoutes } from "./pages/integrations/routes.tsx"
import { platformRoutes } from "./pages/platform/routes.tsx"
import { type ConsoleRoute, SECTIONS } from "./route.ts"
import { match } from "./router.tsx"
import { preloadEveryGroup } from "./rpc.ts"
import { CONSOLE_EVERY_PAGE_LOADED_MARK } from "../../../domain/console/Core.ts"

export const ROUTES: ReadonlyArray<ConsoleRoute> = [
  ...coreRoutes,
  ...accountRoutes,
  ...linksRoutes,
  ...settingsRoutes,
  ...engagementRoutes,
  ...gamesRoutes,
  ...insightsRoutes,
  ...integrationsRoutes,
  ...platformRoutes
]

/** The page for a path, with its parameters; undefined when none matches. */
export const findRoute = (path: string, platformAdmin: boolean) => {
  for (const route of ROUTES) {
    if (route.platformAdmin === true && !platformAdmin) continue
    const params = match(route.pattern, path)
    if (params !== undefined) return { route, params }
  }
  return undefined
}

/** The side menu: the sections that have entries, each with its pages in list order. */
export const navigation = (platformAdmin: boolean) =>
  SECTIONS.map((section) => ({
    section,
    items: ROUTES.filter((route) => route.nav?.section === section && (route.platformAdmin !== true || platformAdmin))
  })).filter((group) => group.items.length > 0)

/** Runs `task` when the browser has nothing else to do (soon, where it cannot tell). */
const whenIdle = (task: () => void) =>
  typeof window.requestIdleCallback === "function" ? window.requestIdleCallback(task) : window.setTimeout(task, 50)

/**
 * Fetches the code of every page `platformAdmin` may open, and of every procedure group, one after another
 * while the browser is idle after the first screen: a page whose code is there renders as soon as it is
 * opened, where one still loading suspends and React reveals it no sooner than 300 ms later (route.ts). The
 * first screen still waits only for the shell and its own page. Stops when `stopped()` says so (signed out).
 * Marks `CONSOLE_EVERY_PAGE_LOADED_MARK` when done.
 */
export const preloadEveryPage = (platformAdmin: boolean, stopped: () => boolean) => {
  const pages = [...new Set(ROUTES.filter((route) => route.platformAdmin !== true || platformAdmin).map((route) => route.page))]
  const next = (index: number) => {
    if (stopped()) return
    const page = pages[index]
    // The mark tells a performance trace (and the browser tests) when nothing is left to fetch.
    if (page === undefined) return void preloadEveryGroup().then(() => performance.mark(CONSOLE_EVERY_PAGE_LOADED_MARK))
    whenIdle(() => void page.preload().then(() => next(index + 1)))
  }
  next(0)
}

/**
 * The home page's code, fetched while the browser is idle on a signed-out screen (signing in, a mailed
 * link's page): it is what signing in opens, and it then shows at once rather than suspending.
 */
export const preloadHomePage = () => whenIdle(() => void findRoute("/", false)?.route.page.preload())
