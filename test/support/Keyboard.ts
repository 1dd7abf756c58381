/**
 * Moving through the console with the keyboard alone in a browser test: Tab to a control, noting every stop
 * whose focus a sighted keyboard user could not see; keys pressed where the focus is; whether a dialog keeps
 * the focus inside it.
 */
import type { Locator, Page } from "playwright-core"
import { step } from "./ConsoleBrowser.ts"

/** Where the focus is (run in the page), and whether it can be seen: a ring or shadow on a visible box. */
export const focusStop = () => {
  const element = document.activeElement as HTMLElement | null
  if (element === null || element === document.body) return { name: "(page)", seen: true }
  const style = getComputedStyle(element)
  const box = element.getBoundingClientRect()
  const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== "none"
  const label = element.getAttribute("aria-label") ??
    (element.id === "" ? null : document.querySelector(`label[for="${element.id}"]`)?.textContent) ?? element.textContent ?? ""
  const name = `${element.tagName.toLowerCase()}[${element.getAttribute("type") ?? ""}] "${label.trim().slice(0, 40)}" on ${location.pathname} (outline ${style.outlineStyle} ${style.outlineWidth}, ${Math.round(box.width)}×${Math.round(box.height)})`
  return { name, seen: ring && box.width > 1 && box.height > 1 }
}

const focusedNow = (target: Locator) => target.evaluate((element) => element === document.activeElement)
export const isFocused = (target: Locator) => step(() => focusedNow(target))

/** Whether `target` has the focus, and whether it is shown. */
export const focusOf = (target: Locator) =>
  step(async (): Promise<"elsewhere" | "visible" | "invisible"> => {
    if (!(await focusedNow(target))) return "elsewhere"
    return (await target.page().evaluate(focusStop)).seen ? "visible" : "invisible"
  })

/** Whether the focus is inside `container`. */
export const focusInside = (container: Locator) => step(() => container.evaluate((element) => element.contains(document.activeElement)))

/**
 * Presses Tab (Shift+Tab when `backwards`) until `target` has the focus and answers how many presses it
 * took. Every stop whose focus cannot be seen is added to `unseen`; without that list, the target's own
 * focus must be seen. Fails when the target is never reached.
 */
export const tabTo = (
  page: Page,
  target: Locator,
  options: { readonly backwards?: boolean; readonly max?: number; readonly unseen?: Array<string> } = {}
) =>
  step(async () => {
    await target.waitFor()
    for (let presses = 1; presses <= (options.max ?? 80); presses++) {
      await page.keyboard.press(options.backwards === true ? "Shift+Tab" : "Tab")
      const stop = await page.evaluate(focusStop)
      if (!stop.seen) options.unseen?.push(stop.name)
      if (await focusedNow(target)) {
        if (!stop.seen && options.unseen === undefined) throw new Error(`the focus on ${stop.name} is not shown`)
        return presses
      }
    }
    throw new Error(`the keyboard never reached ${target}`)
  })

/** Keys pressed where the focus is. */
export const press = (page: Page, ...keys: ReadonlyArray<string>) =>
  step(async () => {
    for (const key of keys) await page.keyboard.press(key)
  })

export const typeText = (page: Page, text: string) => step(() => page.keyboard.type(text))

/** Tab and Shift+Tab round a modal dialog `times` times; answers the stops where the focus left it. */
export const staysInside = (page: Page, dialog: Locator, times: number) =>
  step(async () => {
    const escaped: Array<string> = []
    for (let presses = 0; presses < times; presses++) {
      await page.keyboard.press(presses % 3 === 2 ? "Shift+Tab" : "Tab")
      if (!(await dialog.evaluate((element) => element.contains(document.activeElement)))) escaped.push((await page.evaluate(focusStop)).name)
    }
    return escaped
  })
