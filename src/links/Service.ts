/**
 * The rules of payment links and invoices: who may create and change them, what amounts they take,
 * when they can be paid, and how a payer's payment is made — through the payments engine, as the
 * link's store and mode, never by writing a payment here.
 */
import { Clock, Effect, Option } from "effect"
import type { Permission } from "../../domain/Access.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { StoreId } from "../../domain/Ids.ts"
import {
  type CreateLink,
  DeletedPaymentLink,
  type LinkId,
  type LinkListParams,
  LinkPayment,
  type LinkStatus,
  type PayLink,
  PaymentLink,
  PaymentLinkList,
  PublicPaymentLink,
  type UpdateLink
} from "../../domain/Links.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { checkoutMerchantOf } from "../checkout/Service.ts"
import { newId } from "../platform/Ids.ts"
import { formatAmount, parseAmount } from "../platform/Money.ts"
import { decodeCursor, toPage } from "../platform/Pagination.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { currentDate } from "../platform/Time.ts"
import { PaymentsService } from "../payments/Service.ts"
import { checkoutUrlOf } from "../payments/View.ts"
import { StoresService } from "../stores/Service.ts"
import { LinksRepo, type LinkRow } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const amountOrNull = (minor: bigint | null, currency: LinkRow["currency"]) =>
  minor === null ? null : formatAmount(minor, currency)

/** Where a link stands for a payer right now. */
export const statusOf = (link: LinkRow, now: Date): LinkStatus => {
  if (link.kind === "invoice" && link.paid_at !== null) return "paid"
  if (!link.active) return "inactive"
  if (link.expires_at !== null && link.expires_at.getTime() <= now.getTime()) return "expired"
  return "open"
}

const toPaymentLink = (link: LinkRow, baseUrl: string, now: Date) =>
  new PaymentLink({
    id: link.id,
    object: "payment_link",
    kind: link.kind,
    store_id: link.store_id,
    livemode: link.livemode,
    title: link.title,
    description: link.description,
    amount: amountOrNull(link.amount, link.currency),
    min_amount: amountOrNull(link.min_amount, link.currency),
    max_amount: amountOrNull(link.max_amount, link.currency),
    currency: link.currency,
    active: link.active,
    status: statusOf(link, now),
    reference_id: link.reference_id,
    customer_email: link.customer_email,
    due_date: link.due_date,
    expires_at: iso(link.expires_at),
    url: `${baseUrl}/links/${link.id}`,
    payments_count: link.payments_count,
    paid_at: link.kind === "invoice" ? iso(link.paid_at) : null,
    created_at: link.created_at.toISOString(),
    updated_at: link.updated_at.toISOString()
  })

export class LinksService extends Effect.Service<LinksService>()("links/LinksService", {
  effect: Effect.gen(function*() {
    // `withLockedLink` only takes the lock: what it runs reads and writes through this guarded view.
    const repo = storeData(yield* LinksRepo, "withLockedLink")
    const access = yield* AccessService
    const stores = yield* StoresService
    const payments = yield* PaymentsService
    const publicUrl = yield* PublicBaseUrl

    const linkNotFound = (id: LinkId) => new NotFound({ message: `No such payment link: ${id}`, param: "id" })

    const view = (link: LinkRow) =>
      Effect.zipWith(publicUrl.get, currentDate, (baseUrl, now) => toPaymentLink(link, baseUrl, now))

    /** The store, if the signed-in user may do `permission` on it; console routes take no API key. */
    const storeFor = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))

    /** The link `id`, not deleted, if the signed-in user may change its store; anything else is 404. */
    const manageableLink = <A, E, R>(id: LinkId, use: (link: LinkRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(
          Effect.map(repo.find(id), Option.filter((link) => link.deleted_at === null)),
          (link) => link.store_id,
          "payment.write",
          () => linkNotFound(id),
          use
        )
      )

    const optionalAmount = (value: string | undefined, currency: LinkRow["currency"], param: string) =>
      value === undefined ? Effect.succeed(null) : parseAmount(value, currency, param)

    const create = traced("Links.create")(function*(storeId: StoreId, input: CreateLink) {
      return yield* storeFor(storeId, "payment.write", (store) =>
        Effect.gen(function*() {
          const invalid = (message: string, param: string) => new InvalidRequest({ message, param })
          const amount = yield* optionalAmount(input.amount, input.currency, "amount")
          const minAmount = yield* optionalAmount(input.min_amount, input.currency, "min_amount")
          const maxAmount = yield* optionalAmount(input.max_amount, input.currency, "max_amount")
          if (input.kind === "invoice" && amount === null) {
            return yield* invalid("An invoice needs a fixed amount", "amount")
          }
          if (amount !== null && minAmount !== null) {
            return yield* invalid("min_amount applies only when the payer chooses the amount: omit amount or min_amount", "min_amount")
          }
          if (amount !== null && maxAmount !== null) {
            return yield* invalid("max_amount applies only when the payer chooses the amount: omit amount or max_amount", "max_amount")
          }
          if (minAmount !== null && maxAmount !== null && minAmount > maxAmount) {
            return yield* invalid("max_amount must not be below min_amount", "max_amount")
          }
          if (input.kind === "link" && input.customer_email !== undefined) {
            return yield* invalid("customer_email is for invoices; create the link with kind \"invoice\"", "customer_email")
          }
          if (input.kind === "link" && input.due_date !== undefined) {
            return yield* invalid("due_date is for invoices; create the link with kind \"invoice\"", "due_date")
          }
          const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at)
          if (expiresAt !== null && expiresAt.getTime() <= (yield* Clock.currentTimeMillis)) {
            return yield* invalid("expires_at must be in the future", "expires_at")
          }
          const livemode = input.livemode ?? false
          if (livemode) {
            const current = yield* stores.getById(store.storeId)
            if (!current.live_mode) {
              return yield* new InvalidState({
                message: "This store is not in live mode: activate live mode before creating live links",
                param: "livemode"
              })
            }
          }
          const row = yield* repo.insert({
            id: input.kind === "invoice" ? newId("inv") : newId("lnk"),
            kind: input.kind,
            storeId: store.storeId,
            livemode,
            title: input.title,
            description: input.description ?? null,
            amount,
            minAmount,
            maxAmount,
            currency: input.currency,
            referenceId: input.reference_id ?? null,
            customerEmail: input.customer_email ?? null,
            dueDate: input.due_date ?? null,
            expiresAt
          })
          return yield* view(row)
        }))
    })

    const list = traced("Links.list")(function*(storeId: StoreId, params: LinkListParams) {
      return yield* storeFor(storeId, "payment.read", (store) =>
        Effect.gen(function*() {
          const after = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          const rows = yield* repo.listByStore(store.storeId, { kind: params.kind, active: params.active }, params.limit, after)
          const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
          const baseUrl = yield* publicUrl.get
          const now = yield* currentDate
          return new PaymentLinkList({ ...page, data: page.data.map((row) => toPaymentLink(row, baseUrl, now)) })
        }))
    })

    const update = traced("Links.update")(function*(id: LinkId, input: UpdateLink) {
      return yield* manageableLink(id, () =>
        Effect.gen(function*() {
          const updated = yield* repo.update(id, {
            active: input.active,
            title: input.title,
            description: input.description
          })
          // Deleted between the check and the update.
          if (Option.isNone(updated)) return yield* linkNotFound(id)
          return yield* view(updated.value)
        }))
    })

    const remove = traced("Links.remove")(function*(id: LinkId) {
      return yield* manageableLink(id, () =>
        Effect.gen(function*() {
          if (!(yield* repo.remove(id))) return yield* linkNotFound(id)
          return new DeletedPaymentLink({ id, object: "payment_link", deleted: true })
        }))
    })

    /** The link as the public may see it: a deleted link does not exist. */
    const publicLink = (id: LinkId, found: Option.Option<LinkRow>) =>
      Option.isNone(found) || found.value.deleted_at !== null
        ? Effect.fail(linkNotFound(id))
        : Effect.succeed(found.value)

    const publicView = traced("Links.publicView")(function*(id: LinkId) {
      const link = yield* publicLink(id, yield* repo.find(id))
      const store = yield* stores.getById(link.store_id).pipe(Effect.orDie)
      const baseUrl = yield* publicUrl.get
      const status = statusOf(link, yield* currentDate)
      return new PublicPaymentLink({
        id: link.id,
        object: "payment_link",
        kind: link.kind,
        title: link.title,
        description: link.description,
        amount: amountOrNull(link.amount, link.currency),
        min_amount: amountOrNull(link.min_amount, link.currency),
        max_amount: amountOrNull(link.max_amount, link.currency),
        currency: link.currency,
        active: status === "open",
        status,
        livemode: link.livemode,
        due_date: link.due_date,
        expires_at: iso(link.expires_at),
        merchant: checkoutMerchantOf(store),
        pay_url: `${baseUrl}/links/${link.id}/pay`
      })
    }, AccessService.forPublicLink("a payment link's public page, opened by its link"))

    /** The amount a payer pays through `link`, in minor units, or why that amount is not allowed. */
    const amountToPay = (link: LinkRow, requested: string | undefined) =>
      Effect.gen(function*() {
        const asked = requested === undefined ? null : yield* parseAmount(requested, link.currency)
        if (link.amount !== null) {
          if (asked !== null && asked !== link.amount) {
            return yield* new InvalidRequest({
              message: `This link has a fixed amount of ${formatAmount(link.amount, link.currency)} ${link.currency}: ` +
                "omit amount or send that amount",
              param: "amount"
            })
          }
          return link.amount
        }
        if (asked === null) {
          return yield* new InvalidRequest({
            message: "amount is required: this link lets the payer choose the amount",
            param: "amount"
          })
        }
        if (link.min_amount !== null && asked < link.min_amount) {
          return yield* new InvalidRequest({
            message: `amount must be at least ${formatAmount(link.min_amount, link.currency)} ${link.currency}`,
            param: "amount"
          })
        }
        if (link.max_amount !== null && asked > link.max_amount) {
          return yield* new InvalidRequest({
            message: `amount must be at most ${formatAmount(link.max_amount, link.currency)} ${link.currency}`,
            param: "amount"
          })
        }
        return asked
      })

    /**
     * An invoice is paid once: while a payment of it is open, paying again answers that payment (the
     * payer may have closed the page, or pressed twice), and a new one starts only after it expired,
     * failed or was cancelled. With at most one open payment at a time and none after one was paid, two
     * payments of one invoice can never both be paid. Runs under the link's lock.
     */
    const pendingInvoicePayment = (link: LinkRow) =>
      Effect.gen(function*() {
        const open = yield* repo.openPayment(link.id, yield* currentDate)
        if (Option.isNone(open)) return Option.none<LinkPayment>()
        if (open.value.overdue) {
          return yield* new InvalidState({
            message: "The previous payment of this invoice has just expired; try again in a few seconds"
          })
        }
        return Option.some(
          new LinkPayment({
            object: "link_payment",
            link_id: link.id,
            payment_id: open.value.id,
            checkout_url: checkoutUrlOf(yield* publicUrl.get, open.value.id),
            amount: formatAmount(open.value.amount, open.value.currency),
            currency: open.value.currency
          })
        )
      })

    const pay = traced("Links.pay")(function*(id: LinkId, input: PayLink) {
      return yield* repo.withLockedLink(id, (found) =>
        Effect.gen(function*() {
          const link = yield* publicLink(id, found)
          const status = statusOf(link, yield* currentDate)
          if (status !== "open") {
            return yield* new InvalidState({
              message: status === "paid"
                ? "This invoice has already been paid"
                : status === "expired"
                ? "This payment link has expired"
                : "This payment link is not active"
            })
          }
          const amount = yield* amountToPay(link, input.amount)
          if (link.kind === "invoice") {
            const reused = yield* pendingInvoicePayment(link)
            if (Option.isSome(reused)) return reused.value
          }
          const referenceId = input.reference_id ?? link.reference_id ?? (link.kind === "invoice" ? link.id : null)
          const payment = yield* payments.createFor({ storeId: link.store_id, livemode: link.livemode }, {
            amount: formatAmount(amount, link.currency),
            currency: link.currency,
            description: link.title,
            ...(referenceId === null ? {} : { reference_id: referenceId }),
            metadata: input.payer_email === undefined
              ? { link_id: link.id }
              : { link_id: link.id, payer_email: input.payer_email }
          })
          yield* repo.recordPayment(link.id, payment.id)
          return new LinkPayment({
            object: "link_payment",
            link_id: link.id,
            payment_id: payment.id,
            checkout_url: payment.checkout_url,
            amount: payment.amount,
            currency: payment.currency
          })
        }))
    }, AccessService.forPublicLink("a payer paying through a payment link"))

    return { create, list, update, remove, publicView, pay } as const
  }),
  dependencies: [LinksRepo.Default, AccessService.Default, StoresService.Default, PaymentsService.Default]
}) {}
