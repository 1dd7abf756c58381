/** A labelled <select> whose error (a failure naming this field in `param`) is shown under it, like Field. */
import { type ReactNode, useId } from "react"
import type { ConsoleFailure } from "../rpc.ts"

export const SelectField = <V extends string>(
  props: {
    readonly label: string
    readonly name: string
    readonly value: V
    readonly onChange: (value: V) => void
    readonly options: ReadonlyArray<{ readonly value: V; readonly label: string }>
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
