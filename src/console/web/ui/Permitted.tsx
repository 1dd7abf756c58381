/**
 * Actions guarded by a permission (permissions.ts): a button that is disabled with the reason when the
 * user's role may not take it, and a note for a whole page or form that the role may only read.
 */
import { type ReactNode, useId } from "react"
import { type Permission, usePermission } from "../permissions.ts"

export const PermittedButton = (
  props: {
    readonly permission: Permission
    readonly children: ReactNode
    readonly kind?: "primary" | "secondary" | "danger" | "ghost"
    readonly type?: "button" | "submit"
    readonly onClick?: () => void
    readonly disabled?: boolean
    readonly busy?: boolean
    /** The organization it acts in, when not the current store's. */
    readonly organizationId?: string
  }
) => {
  const { allowed, reason } = usePermission(props.permission, props.organizationId)
  const reasonId = useId()
  return (
    <>
      <button
        type={props.type ?? "button"}
        className={`button button-${props.kind ?? "secondary"}`}
        onClick={props.onClick}
        disabled={!allowed || props.disabled === true || props.busy === true}
        aria-busy={props.busy === true ? true : undefined}
        title={reason}
        aria-describedby={allowed ? undefined : reasonId}
        data-permission={props.permission}
      >
        {props.children}
      </button>
      {allowed ? null : <span id={reasonId} className="visually-hidden">{reason}</span>}
    </>
  )
}

/** Said once above a page or form whose changes the user's role may not make. */
export const PermissionNote = ({ permission, organizationId }: { readonly permission: Permission; readonly organizationId?: string }) => {
  const { allowed, reason } = usePermission(permission, organizationId)
  return allowed ? null : <div className="alert alert-info permission-note" role="note">{reason}</div>
}
