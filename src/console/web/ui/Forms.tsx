/**
 * Form controls `ui.tsx` lacks: a labelled select and a labelled multi-line text, each showing the failure
 * that names its field (`param`) under it, like `Field`.
 */
import { type ReactNode, useId } from "react"
import type { ConsoleFailure } from "../rpc.ts"

const fieldErrorOf = (error: ConsoleFailure | null | undefined, name: string) => error?.param === name ? error : undefined

export const SelectField = <V extends string>(props: {
  readonly label: string
  readonly name: string
  readonly value: V
  readonly options: ReadonlyArray<{ readonly value: V; readonly label: string }>
  readonly onChange: (value: V) => void
  readonly error?: ConsoleFailure | null | undefined
  readonly hint?: ReactNode
}) => {
  const id = useId()
  const fieldError = fieldErrorOf(props.error, props.name)
  return (
    <div className={`field${fieldError === undefined ? "" : " field-invalid"}`}>
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
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
  const fieldError = fieldErrorOf(props.error, props.name)
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

/** A failure of a query or an action that belongs to no field: said at the top of the card it concerns. */
export const ErrorNotice = ({ error }: { readonly error: ConsoleFailure | null | undefined }) =>
  error === null || error === undefined ? null : <div className="alert alert-error" role="alert">{error.message}</div>

/** A fraction as a percentage with one decimal ("12.5 %"); a dash when there is none. */
export const formatPercent = (fraction: number | null) => fraction === null || !Number.isFinite(fraction) ? "—" : `${(fraction * 100).toFixed(1)} %`
