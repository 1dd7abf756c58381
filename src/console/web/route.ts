/**
 * What a console page is: its pattern, its lazily loaded component, its side-menu entry. Areas list their
 * pages in `pages/<area>/routes.tsx` with these; routes.tsx joins the lists.
 */
import { type ComponentType, lazy, type LazyExoticComponent } from "react"

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
}

/** A page's component, its code loaded when first shown, or sooner by `preload`. */
export type LazyPage = LazyExoticComponent<ComponentType<PageProps>> & { readonly preload: () => void }

/**
 * A page whose code loads when it is first shown: `load` imports its module, `pick` answers the component
 * (adapting the pattern's parameters to the page's own props). `preload` starts loading it now (the
 * browser imports a module once, so showing the page later waits only for what is left).
 */
export const lazyPage = <M>(load: () => Promise<M>, pick: (module: M) => ComponentType<PageProps>): LazyPage =>
  Object.assign(lazy(async () => ({ default: pick(await load()) })), {
    preload: () => {
      // A failure is the page's own to show when it is opened.
      load().catch(() => undefined)
    }
  })

