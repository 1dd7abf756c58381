/** Client routes under /console: the address bar is the state, so a page can be reloaded or shared. */
import { type MouseEvent, type ReactNode, useSyncExternalStore } from "react"

export const BASE = "/console"

const listeners = new Set<() => void>()
const notify = () => listeners.forEach((listener) => listener())
window.addEventListener("popstate", notify)

const subscribe = (listener: () => void) => {
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

const current = () => window.location.pathname + window.location.search

/** The path below /console of a pathname: "/" for the home page. */
const pathOf = (pathname: string) => pathname.slice(BASE.length) || "/"

/** The path below /console now, outside React (main.tsx, before the first render). */
export const currentPath = () => pathOf(window.location.pathname)

/** The path below /console ("/" for the home page) and the query string. */
export const useLocation = () => {
  const href = useSyncExternalStore(subscribe, current)
  const url = new URL(href, window.location.origin)
  return { path: pathOf(url.pathname), search: url.searchParams }
}

export const navigate = (to: string, options: { readonly replace?: boolean } = {}) => {
  const href = BASE + (to === "/" ? "" : to)
  if (href === current()) return
  if (options.replace === true) window.history.replaceState(null, "", href)
  else window.history.pushState(null, "", href)
  notify()
  window.scrollTo(0, 0)
}

export const Link = (props: { readonly to: string; readonly children: ReactNode; readonly className?: string; readonly "aria-current"?: "page" | undefined }) => {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(props.to)
  }
  return (
    <a href={BASE + (props.to === "/" ? "" : props.to)} onClick={onClick} className={props.className} aria-current={props["aria-current"]}>
      {props.children}
    </a>
  )
}

/** Matches `/payments/:id` style patterns; the parameters, or undefined. */
export const match = (pattern: string, path: string): Record<string, string> | undefined => {
  const want = pattern.split("/")
  const have = path.split("/")
  if (want.length !== have.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!
    const value = have[i]!
    if (segment.startsWith(":")) params[segment.slice(1)] = decodeURIComponent(value)
    else if (segment !== value) return undefined
  }
  return params
}
