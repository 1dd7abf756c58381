/**
 * Form controls ui.tsx lacks: a labelled select, checkbox and multi-line text, each showing the failure that
 * names its field (`param`) under it, like `Field`.
 */
import { type ReactNode, useId } from "react"
import type { ConsoleFailure } from "../rpc.ts"

/** A labelled select whose error (a failure naming this field in `param`) is shown under it. */
export const SelectField = <V extends string>(
  props: {
    readonly label: string
    readonly name: string
    readonly value: V
    readonly options: ReadonlyArray<{ readonly value: V; readonly label: string }>
    readonly onChange: (value: V) => void
    readonly error?: ConsoleFailure | null | undefined
    readonly hint?: ReactNode
    readonly disabled?: boolean
  }
) => {
  const id = useId()
  const fieldError = props.error?.param === props.name ? props.error : undefined
  return (
    <div className={`field${fieldError === undefined ? "" : " field-invalid"}`}>
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
        disabled={props.disabled}
        onChange={(event) => props.onChange(event.target.value as V)}
        aria-invalid={fieldError === undefined ? undefined : true}
        aria-describedby={fieldError === undefined ? (props.hint === undefined ? undefined : `${id}-hint`) : `${id}-error`}
      >
        {props.options.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
      </select>
      {props.hint !== undefined && fieldError === undefined ? <p className="field-hint" id={`${id}-hint`}>{props.hint}</p> : null}
      {fieldError === undefined ? null : <p className="field-error" id={`${id}-error`} role="alert">{fieldError.message}</p>}
    </div>
  )
}

export const CheckField = (
  props: { readonly label: string; readonly checked: boolean; readonly onChange: (checked: boolean) => void; readonly disabled?: boolean; readonly hint?: string }
) => {
  const id = useId()
  return (
    <div className="check-field">
      <label className="check" htmlFor={id}>
        <input id={id} type="checkbox" checked={props.checked} disabled={props.disabled} onChange={(event) => props.onChange(event.target.checked)} />
        {props.label}
      </label>
      {props.hint === undefined ? null : <p className="field-hint">{props.hint}</p>}
    </div>
  )
}

/** A failure of a read: what went wrong, and a way to try again. */
export const LoadError = ({ error, retry }: { readonly error: ConsoleFailure; readonly retry: () => void }) => (
  <div className="alert alert-error" role="alert">
    {error.message} <button type="button" className="link-button" onClick={retry}>Try again</button>
  </div>
)

/** A labelled multi-line text whose error (a failure naming this field in `param`) is shown under it. */
export const TextAreaField = (props: {
  readonly label: string
  readonly name: string
  readonly value: string
  readonly onChange: (value: string) => void
  readonly error?: ConsoleFailure | null | undefined
  readonly rows?: number
  readonly placeholder?: string
  readonly required?: boolean
}) => {
  const id = useId()
  const fieldError = props.error?.param === props.name ? props.error : undefined
  return (
    <div className={`field${fieldError === undefined ? "" : " field-invalid"}`}>
      <label htmlFor={id}>{props.label}</label>
      <textarea
        id={id}
        name={props.name}
        rows={props.rows ?? 3}
        value={props.value}
        placeholder={props.placeholder}
        required={props.required}
        onChange={(event) => props.onChange(event.target.value)}
        aria-invalid={fieldError === undefined ? undefined : true}
        aria-describedby={fieldError === undefined ? undefined : `${id}-error`}
      />
      {fieldError === undefined ? null : <p className="field-error" id={`${id}-error`} role="alert">{fieldError.message}</p>}
    </div>
  )
}
