/**
 * Content negotiation of the hosted pages: their routes answer JSON, or a page (rendered by
 * `pages/Document.tsx`) when a browser navigates to them.
 */

/** Whether a request's Accept header prefers an HTML page to JSON (a browser navigating). */
export const prefersHtml = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  const quality = (type: string) => {
    let best = -1
    for (const part of accept.split(",")) {
      const [media = "", ...params] = part.trim().split(";")
      const q = Number(params.find((p) => p.trim().startsWith("q="))?.trim().slice(2) ?? "1")
      if (media.trim() === type) best = Math.max(best, Number.isNaN(q) ? 1 : q)
    }
    return best
  }
  const html = quality("text/html")
  return html > 0 && html >= quality("application/json")
}
