/** The console's building blocks: buttons, fields that show their error, badges, dialogs, amounts. */
import { type ReactNode, type SyntheticEvent, useEffect, useId, useRef } from "react"
import type { ConsoleFailure } from "./rpc.ts"

// Formatters are made once and kept: making an Intl formatter costs far more than formatting with it, and a
// list draws two per row.
const amountFormats = new Map<string, Intl.NumberFormat>()
const amountFormat = (currency: string) => {
  let format = amountFormats.get(currency)
  if (format === undefined) {
    format = new Intl.NumberFormat("en-US", {
      style: "currency",
      currency,
      currencyDisplay: currency === "KHR" ? "code" : "symbol",
      minimumFractionDigits: currency === "KHR" ? 0 : 2
    })
    amountFormats.set(currency, format)
  }
  return format
}

export const formatAmount = (amount: string, currency: string) => {
  const value = Number(amount)
  if (!Number.isFinite(value)) return `${amount} ${currency}`
  return amountFormat(currency).format(value)
}

let timeFormat: Intl.DateTimeFormat | undefined
export const formatTime = (iso: string | null) =>
  iso === null ? "—" : (timeFormat ??= new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short" })).format(new Date(iso))

const STATUS_LABELS: Record<string, string> = {
  pending: "Pending",
  scanned: "Scanned",
  paid: "Paid",
  expired: "Expired",
  failed: "Failed",
  cancelled: "Cancelled",
  refunded: "Refunded",
  partially_refunded: "Partially refunded"
}

export const StatusBadge = ({ status }: { readonly status: string }) => (
  <span className={`badge badge-${status}`} data-status={status}>{STATUS_LABELS[status] ?? status}</span>
)

export const Button = (
  props: {
    readonly children: ReactNode
    readonly kind?: "primary" | "secondary" | "danger" | "ghost"
    readonly type?: "button" | "submit"
    readonly onClick?: () => void
    readonly disabled?: boolean
    readonly busy?: boolean
    readonly title?: string
  }
) => (
  <button
    type={props.type ?? "button"}
    className={`button button-${props.kind ?? "secondary"}`}
    onClick={props.onClick}
    disabled={props.disabled === true || props.busy === true}
    aria-busy={props.busy === true ? true : undefined}
    title={props.title}
  >
    {props.children}
  </button>
)

/** A labelled input whose error (a failure naming this field in `param`) is shown under it. */
export const Field = (
  props: {
    readonly label: string
    readonly name: string
    readonly value: string
    readonly onChange: (value: string) => void
    readonly type?: string
    readonly autoComplete?: string
    readonly inputMode?: "numeric" | "decimal" | "email" | "text"
    readonly required?: boolean
    readonly hint?: ReactNode
    readonly error?: ConsoleFailure | null | undefined
    readonly autoFocus?: boolean
    readonly placeholder?: string
  }
) => {
  const id = useId()
  const fieldError = props.error?.param === props.name ? props.error : undefined
  return (
    <div className={`field${fieldError === undefined ? "" : " field-invalid"}`}>
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? "text"}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
        autoComplete={props.autoComplete}
        inputMode={props.inputMode}
        required={props.required}
        autoFocus={props.autoFocus}
        placeholder={props.placeholder}
        aria-invalid={fieldError === undefined ? undefined : true}
        aria-describedby={fieldError === undefined ? (props.hint === undefined ? undefined : `${id}-hint`) : `${id}-error`}
      />
      {props.hint !== undefined && fieldError === undefined ? <p className="field-hint" id={`${id}-hint`}>{props.hint}</p> : null}
      {fieldError === undefined ? null : <p className="field-error" id={`${id}-error`} role="alert">{fieldError.message}</p>}
    </div>
  )
}

/**
 * The six-digit code of an authenticator app (sign-in, high-value refunds, turning MFA on): numeric, offered to
 * the browser's one-time-code autofill, and shown at its field when the server refuses it.
 */
export const CodeField = (
  props: {
    readonly label?: string
    readonly name: string
    readonly value: string
    readonly onChange: (value: string) => void
    readonly error?: ConsoleFailure | null | undefined
    readonly hint?: ReactNode
    readonly autoFocus?: boolean
  }
) => (
  <Field
    {...props}
    label={props.label ?? "Authentication code"}
    inputMode="numeric"
    autoComplete="one-time-code"
    required
  />
)

/** A failure that names no field of the form it belongs to. */
export const FormError = ({ error, fields }: { readonly error: ConsoleFailure | null | undefined; readonly fields: ReadonlyArray<string> }) =>
  error === null || error === undefined || (error.param !== undefined && fields.includes(error.param))
    ? null
    : <div className="alert alert-error" role="alert">{error.message}</div>

/** A modal dialog (the browser's own <dialog>: focus is trapped and Escape closes it). */
export const Dialog = (
  props: { readonly title: string; readonly open: boolean; readonly onClose: () => void; readonly children: ReactNode }
) => {
  const ref = useRef<HTMLDialogElement>(null)
  const closedByState = useRef(false)
  const titleId = useId()
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (props.open && !dialog.open) dialog.showModal()
    if (!props.open && dialog.open) {
      closedByState.current = true
      dialog.close()
    }
  }, [props.open])
  const closeOnCancel = (event: SyntheticEvent<HTMLDialogElement>) => {
    event.preventDefault()
    props.onClose()
  }
  // The `close` event comes a task after the dialog closed, and a key press can come first (the browser runs
  // input before such tasks): Escape, then Enter on the opener at once, opened the dialog again before the
  // first closing's event arrived, which then closed the state. The event of a closing the state asked for
  // is not news; only one the browser made on its own (a `method="dialog"` form) closes the state.
  const closeWithDialog = () => {
    if (closedByState.current) closedByState.current = false
    else props.onClose()
  }
  return (
    // Escape asks to close (`cancel`); the browser's own closing is prevented and the state closes the
    // dialog instead (the effect above), so the dialog is never closed while the state still says open.
    // Left to the browser, it closed at once and the state followed a task later (with its `close`
    // event): an Enter on the opener in between found the state already open and did nothing, and the
    // late event then closed the state too.
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onCancel={closeOnCancel} onClose={closeWithDialog}>
      {props.open
        ? (
          <>
            <header className="dialog-header">
              <h2 id={titleId}>{props.title}</h2>
              <button type="button" className="icon-button" aria-label="Close" onClick={props.onClose}>×</button>
            </header>
            {props.children}
          </>
        )
        : null}
    </dialog>
  )
}

export const Empty = ({ title, children }: { readonly title: string; readonly children?: ReactNode }) => (
  <div className="empty">
    <p className="empty-title">{title}</p>
    {children}
  </div>
)

export const Loading = ({ label = "Loading…" }: { readonly label?: string }) => <p className="loading" role="status">{label}</p>

/** A fresh Idempotency-Key: one per form submission, kept while the same submission is retried. */
export const newIdempotencyKey = () => crypto.randomUUID()
