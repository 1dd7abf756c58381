/**
 * The payments list's query: its cache key and its call, shared by the page and by the route's prefetch,
 * which takes the first page the HTML carried (src/console/Context.ts) or asks for it as soon as the console
 * knows the store (main.tsx), before the page is drawn.
 */
import type { QueryClient } from "@tanstack/react-query"
import { CarriedPayments, CONSOLE_PAYMENTS_META, CONSOLE_PAYMENTS_PAGE_SIZE } from "../../../../domain/console/Core.ts"
import type { ConsoleClientShape } from "../../../../domain/ConsoleClient.ts"
import type { StoreId } from "../../../../domain/Ids.ts"
import type { PaymentStatus } from "../../../../domain/Payments.ts"
import type { PrefetchWorkspace } from "../route.ts"
import { takeCarried } from "../carried.ts"
import { callConsole } from "../rpc.ts"

export const PAGE_SIZE = CONSOLE_PAYMENTS_PAGE_SIZE

export interface Filters {
  readonly status: PaymentStatus | ""
  readonly reference: string
  readonly from: string
  readonly to: string
}
export const NO_FILTERS: Filters = { status: "", reference: "", from: "", to: "" }

/** The day's bounds in the user's own time zone, as the API's ISO timestamps. */
const startOfDay = (day: string) => new Date(`${day}T00:00:00`).toISOString()
const endOfDay = (day: string) => new Date(`${day}T23:59:59.999`).toISOString()

export const paymentsKey = (storeId: StoreId, livemode: boolean, filters: Filters, cursor: string | undefined) =>
  ["payments", storeId, livemode, filters, cursor] as const

/** One page of the store's payments in one mode, filtered, from `cursor`. */
export const listPayments = (storeId: StoreId, livemode: boolean, filters: Filters, cursor: string | undefined) =>
  (client: ConsoleClientShape) =>
    client.ListPayments({
      store_id: storeId,
      livemode,
      limit: PAGE_SIZE,
      cursor,
      ...(filters.status === "" ? {} : { status: filters.status }),
      ...(filters.reference.trim() === "" ? {} : { reference_id: filters.reference.trim() }),
      ...(filters.from === "" ? {} : { "created[gte]": startOfDay(filters.from) }),
      ...(filters.to === "" ? {} : { "created[lte]": endOfDay(filters.to) })
    })

/**
 * The unfiltered first page, before the page is drawn: the one the HTML carried when it is this workspace's
 * (a tab that chose another store or mode, or a page opened without it, asks for its own).
 */
export const prefetchPayments = ({ livemode, storeId }: PrefetchWorkspace, queryClient: QueryClient) => {
  const queryKey = paymentsKey(storeId, livemode, NO_FILTERS, undefined)
  const carried = takeCarried(CONSOLE_PAYMENTS_META, CarriedPayments)
  if (carried !== undefined && carried.store_id === storeId && carried.livemode === livemode) {
    queryClient.setQueryData(queryKey, carried.page)
    return
  }
  void queryClient.prefetchQuery({ queryKey, queryFn: () => callConsole(listPayments(storeId, livemode, NO_FILTERS, undefined)) })
}
