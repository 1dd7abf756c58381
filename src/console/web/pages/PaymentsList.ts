/**
 * The payments list's query: its cache key and its call, shared by the page and by the route's prefetch,
 * which asks for the first page as soon as the console knows the store (main.tsx), before the page is drawn.
 */
import type { QueryClient } from "@tanstack/react-query"
import type { ConsoleClientShape } from "../../../../domain/ConsoleClient.ts"
import type { StoreId } from "../../../../domain/Ids.ts"
import type { PaymentStatus } from "../../../../domain/Payments.ts"
import type { PrefetchWorkspace } from "../route.ts"
import { callConsole } from "../rpc.ts"

export const PAGE_SIZE = 20

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

/** The unfiltered first page, asked for before the page is drawn. */
export const prefetchPayments = ({ livemode, storeId }: PrefetchWorkspace, queryClient: QueryClient) =>
  void queryClient.prefetchQuery({
    queryKey: paymentsKey(storeId, livemode, NO_FILTERS, undefined),
    queryFn: () => callConsole(listPayments(storeId, livemode, NO_FILTERS, undefined))
  })
