/**
 * Cursor paging for a list page: the trail of cursors behind the page shown (so Previous goes back) and
 * the Previous / Next buttons under the table.
 */
import { useEffect, useState } from "react"
import { Button } from "../ui.tsx"

/** The cursor of the page shown, and the trail that leads back; it starts over whenever `resetOn` changes. */
export const useCursorTrail = (resetOn: ReadonlyArray<unknown>) => {
  const [trail, setTrail] = useState<ReadonlyArray<string | undefined>>([undefined])
  useEffect(() => setTrail([undefined]), resetOn)
  return {
    cursor: trail.at(-1),
    canGoBack: trail.length > 1,
    back: () => setTrail(trail.slice(0, -1)),
    forward: (next: string) => setTrail([...trail, next])
  }
}

export const Pager = (props: {
  readonly trail: ReturnType<typeof useCursorTrail>
  readonly page: { readonly has_more: boolean; readonly next_cursor: string | null } | undefined
  readonly label: string
}) => {
  const { page, trail } = props
  if (!trail.canGoBack && page?.has_more !== true) return null
  return (
    <nav className="pager" aria-label={props.label}>
      <Button disabled={!trail.canGoBack} onClick={trail.back}>Previous</Button>
      <Button disabled={page?.has_more !== true} onClick={() => page?.next_cursor != null && trail.forward(page.next_cursor)}>Next</Button>
    </nav>
  )
}
