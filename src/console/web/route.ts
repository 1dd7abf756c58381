/**
 * What a console page is: its pattern, its lazily loaded component, its side-menu entry. Areas list their
 * pages in `pages/<area>/routes.tsx` with these; routes.tsx joins the lists.
 */
import type { QueryClient } from "@tanstack/react-query"
import { type ComponentType, createElement, lazy } from "react"
import type { StoreId } from "../../../domain/Ids.ts"

/** The side menu's groups, in the order shown. */
export const SECTIONS = ["Payments", "Customers", "Insights", "Developers", "Settings", "Platform"] as const
export type NavSection = (typeof SECTIONS)[number]

export interface PageProps {
  /** The pattern's parameters: `id` of `/payments/:id`. */
  readonly params: Readonly<Record<string, string>>
}

export interface ConsoleRoute {
  /** `/payments/:id` style; matched whole. */
  readonly pattern: string
  readonly page: LazyPage
  /** Its entry in the side menu; a page without one is reached by links (a detail page). */
  readonly nav?: { readonly label: string; readonly section: NavSection }
  /** Only platform administrators see it (the server refuses its RPCs to anyone else anyway). */
  readonly platformAdmin?: boolean
  /**
   * Asks for what the page shows first, into the query cache, as soon as the console knows the store (the
   * page opened with its context: main.tsx), so the call runs while the shell is drawn.
   */
  readonly prefetch?: (workspace: PrefetchWorkspace, queryClient: QueryClient) => void
}

/** The store and mode a page opened in will show. */
export interface PrefetchWorkspace {
  readonly storeId: StoreId
  readonly livemode: boolean
}

/** A page's component, its code loaded when first shown, or sooner by `preload`. */
export type LazyPage = ComponentType<PageProps> & { readonly preload: () => Promise<void> }

/**
 * A page whose code loads when it is first shown: `load` imports its module, `pick` answers the component
 * (adapting the pattern's parameters to the page's own props). `preload` starts loading it now (the
 * browser imports a module once, so showing the page later waits only for what is left); it settles once
 * the code is there or has failed to load.
 *
 * A page whose code is already there renders at once; only one still loading suspends. (A suspended page
 * is revealed no sooner than 300 ms after its fallback showed, React's throttle for loading states: on
 * the first screen that wait came on top of the page's own data.)
 */
export const lazyPage = <M>(load: () => Promise<M>, pick: (module: M) => ComponentType<PageProps>): LazyPage => {
  let loaded: ComponentType<PageProps> | undefined
  const loadPage = () => load().then((module) => (loaded ??= pick(module)))
  const Loading = lazy(async () => ({ default: await loadPage() }))
  const Page = (props: PageProps) => createElement(loaded ?? Loading, props)
  return Object.assign(Page, {
    // A failure is the page's own to show when it is opened.
    preload: () => loadPage().then(() => undefined, () => undefined)
  })
}

