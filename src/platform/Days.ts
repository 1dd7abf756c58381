/**
 * Date ranges of the reports: whole UTC days, `from` and `to` inclusive, at most 366 days, by default
 * the last 30 ending today. Today is read from the Clock.
 */
import { Effect } from "effect"
import { DEFAULT_RANGE_DAYS, MAX_RANGE_DAYS } from "../../domain/Analytics.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import { currentDate } from "./Time.ts"

const DAY_MS = 24 * 60 * 60 * 1000

export interface DayRange {
  readonly from: string
  readonly to: string
  /** The first instant of `from`. */
  readonly start: Date
  /** The first instant after `to`. */
  readonly end: Date
  readonly days: number
}

export const dayOf = (date: Date): string => date.toISOString().slice(0, 10)
export const startOfDay = (day: string): Date => new Date(`${day}T00:00:00.000Z`)
export const addDays = (day: string, days: number): string => dayOf(new Date(startOfDay(day).getTime() + days * DAY_MS))
export const daysBetween = (from: string, to: string): number => Math.round((startOfDay(to).getTime() - startOfDay(from).getTime()) / DAY_MS)

export const dayRange = (params: { readonly from?: string | undefined; readonly to?: string | undefined }) =>
  Effect.gen(function*() {
    const to = params.to ?? dayOf(yield* currentDate)
    const from = params.from ?? addDays(to, -(DEFAULT_RANGE_DAYS - 1))
    if (from > to) return yield* new InvalidRequest({ message: `from (${from}) must not be after to (${to})`, param: "from" })
    const days = daysBetween(from, to) + 1
    if (days > MAX_RANGE_DAYS) {
      return yield* new InvalidRequest({ message: `The range may span at most ${MAX_RANGE_DAYS} days; this one spans ${days}`, param: "from" })
    }
    return { from, to, start: startOfDay(from), end: startOfDay(addDays(to, 1)), days } satisfies DayRange
  })
