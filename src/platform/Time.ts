/**
 * The current time for rules that depend on it (expiry, leases, lifetimes, rotation windows), read from
 * Effect's `Clock` rather than the system clock, so tests move it with `TestClock` instead of sleeping.
 */
import { DateTime, Effect } from "effect"

/** Now, as a `Date` (what the repos and the SQL driver take). */
export const currentDate: Effect.Effect<Date> = Effect.map(DateTime.now, DateTime.toDateUtc)

/** `date` moved by `millis` (negative for earlier). */
export const addMillis = (date: Date, millis: number): Date => DateTime.toDateUtc(DateTime.add(DateTime.unsafeMake(date), { millis }))
