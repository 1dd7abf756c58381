/**
 * The console pages the account mails link to (`?token=` in each): verify an address, accept an
 * invitation, confirm a new address. They answer signed in or not, so App shows them before it decides
 * between the sign-in page and the shell; their code loads only when one is opened.
 */
import { Suspense } from "react"
import type { ConsoleContext } from "../../../../../domain/Console.ts"
import { ACCOUNT_LINK_PAGES } from "../../../../../domain/console/Account.ts"
import { BASE } from "../../router.tsx"
import { lazyPage } from "../../route.ts"
import { Loading } from "../../ui.tsx"

const pages = {
  [ACCOUNT_LINK_PAGES.verifyEmail.slice(BASE.length)]: lazyPage(() => import("./LinkPages.tsx"), (m) => m.VerifyEmailPage),
  [ACCOUNT_LINK_PAGES.invitation.slice(BASE.length)]: lazyPage(() => import("./Invitation.tsx"), (m) => m.InvitationPage),
  [ACCOUNT_LINK_PAGES.emailChange.slice(BASE.length)]: lazyPage(() => import("./LinkPages.tsx"), (m) => m.ConfirmEmailPage)
}

export const isAccountLinkPath = (path: string) => Object.hasOwn(pages, path)

/** The page of a mailed link; `signedIn` is the console's context when a session is open. */
export const AccountLinkPage = ({ path, signedIn }: { readonly path: string; readonly signedIn: ConsoleContext | undefined }) => {
  const Page = pages[path]
  if (Page === undefined) return null
  return (
    <Suspense fallback={<div className="splash"><Loading /></div>}>
      <Page params={{ signedIn: signedIn === undefined ? "" : signedIn.me.user.email }} />
    </Suspense>
  )
}
