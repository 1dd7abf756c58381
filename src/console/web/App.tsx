/** The console: signed out, the sign-in and registration pages; signed in, the shell and its pages. */
import { useQueryClient } from "@tanstack/react-query"
import { type FormEvent, Suspense, useEffect, useId, useRef, useState } from "react"
import { Link, navigate, useLocation } from "./router.tsx"
import { AccountLinkPage, isAccountLinkPath } from "./pages/account/links.tsx"
import { findRoute, navigation, preloadEveryPage, preloadHomePage } from "./routes.tsx"
import { onSignedOut, useConnectionState, useConsoleMutation, useConsoleQuery } from "./rpc.ts"
import { register, requestPasswordReset, signOut, useSignInSteps, useSubmission } from "./session.ts"
import { Button, CodeField, Field, FormError, Loading } from "./ui.tsx"
import { useWorkspace, WorkspaceProvider } from "./workspace.tsx"

export const CONTEXT_KEY = ["context"] as const

export const App = () => {
  const queryClient = useQueryClient()
  const context = useConsoleQuery(CONTEXT_KEY, (client) => client.Context())
  const { path } = useLocation()

  // A session that ends (signed out elsewhere, idle, revoked) drops everything cached for it; a call
  // refused while signed out already is the sign-in page's business, not another reset.
  useEffect(() =>
    onSignedOut(() => {
      if (queryClient.getQueryData(CONTEXT_KEY) === undefined) return
      queryClient.clear()
    }), [queryClient])

  useEffect(() => {
    document.title = context.data === undefined ? "Sign in · Merchant console" : "Merchant console"
  }, [context.data])

  const signedOut = context.error !== null
  useEffect(() => {
    if (signedOut) preloadHomePage()
  }, [signedOut])

  if (context.isPending) return <div className="splash"><Loading /></div>
  // The pages of the mailed links answer signed in or out.
  if (isAccountLinkPath(path)) return <AccountLinkPage path={path} signedIn={context.data} />
  if (context.error !== null) {
    if (context.error.code !== "unauthorized") {
      return (
        <div className="splash">
          <div className="alert alert-error" role="alert">{context.error.message}</div>
          <Button onClick={() => void context.refetch()}>Try again</Button>
        </div>
      )
    }
    if (path === "/register") return <RegisterPage />
    return path === "/forgot-password" ? <ForgotPasswordPage /> : <SignInPage />
  }
  return (
    <WorkspaceProvider context={context.data}>
      <Shell />
    </WorkspaceProvider>
  )
}

const signedIn = async (queryClient: ReturnType<typeof useQueryClient>) => {
  await queryClient.resetQueries({ queryKey: CONTEXT_KEY })
  navigate("/", { replace: true })
}

export const AuthLayout = ({ title, children }: { readonly title: string; readonly children: React.ReactNode }) => (
  <main className="auth">
    <div className="auth-brand" aria-hidden="true"><span className="logo-mark">K</span> KHQR Merchant</div>
    <section className="auth-card" aria-labelledby="auth-title">
      <h1 id="auth-title">{title}</h1>
      {children}
    </section>
  </main>
)

const SignInPage = () => {
  const queryClient = useQueryClient()
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const { busy, code, error, mfaStep, setCode, submit: signInWith } = useSignInSteps(() => signedIn(queryClient))

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void signInWith({ email, password })
  }

  return (
    <AuthLayout title={mfaStep ? "Two-step verification" : "Sign in to your account"}>
      <form onSubmit={submit} noValidate>
        <FormError error={error} fields={mfaStep ? ["mfa_code"] : ["email", "password"]} />
        {mfaStep
          ? (
            <>
              <p className="muted">Enter the 6-digit code from your authenticator app.</p>
              <CodeField name="mfa_code" value={code} onChange={setCode} error={error} autoFocus />
            </>
          )
          : (
            <>
              <Field label="Email" name="email" type="email" value={email} onChange={setEmail} autoComplete="username" error={error} required autoFocus />
              <Field label="Password" name="password" type="password" value={password} onChange={setPassword} autoComplete="current-password" error={error} required />
              <p className="auth-aside"><Link to="/forgot-password">Forgot your password?</Link></p>
            </>
          )}
        <Button kind="primary" type="submit" busy={busy}>{mfaStep ? "Verify" : "Sign in"}</Button>
      </form>
      {mfaStep ? null : <p className="auth-footer">New to KHQR Merchant? <Link to="/register">Create an account</Link></p>}
    </AuthLayout>
  )
}

/**
 * "Forgot your password": mails a reset link to the address. The page says the same whether or not the
 * address has an account (so it tells no one who has one), and what to do when no mail comes.
 */
const ForgotPasswordPage = () => {
  const [email, setEmail] = useState("")
  const [sentTo, setSentTo] = useState<string | null>(null)
  const { busy, error, run } = useSubmission()

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      await requestPasswordReset({ email: email.trim() })
      setSentTo(email.trim())
    })
  }

  if (sentTo !== null) {
    return (
      <AuthLayout title="Check your e-mail">
        <div role="status">
          <p>If an account uses <strong>{sentTo}</strong>, a link to choose a new password is on its way. It works for one hour, once.</p>
          <p className="muted">No e-mail after a few minutes? Check the spam folder and the address, then ask again.</p>
        </div>
        <p className="auth-footer"><Link to="/">Back to sign in</Link></p>
      </AuthLayout>
    )
  }

  return (
    <AuthLayout title="Reset your password">
      <form onSubmit={submit} noValidate>
        <FormError error={error} fields={["email"]} />
        <p className="muted">Enter the e-mail address you sign in with, and we will send you a link to choose a new password.</p>
        <Field label="Email" name="email" type="email" value={email} onChange={setEmail} autoComplete="username" error={error} required autoFocus />
        <Button kind="primary" type="submit" busy={busy}>Send the link</Button>
      </form>
      <p className="auth-footer">Remembered it? <Link to="/">Back to sign in</Link></p>
    </AuthLayout>
  )
}

const RegisterPage = () => {
  const queryClient = useQueryClient()
  const [form, setForm] = useState({ name: "", organization_name: "", email: "", password: "" })
  const { busy, error, run } = useSubmission()
  const set = (field: keyof typeof form) => (value: string) => setForm((previous) => ({ ...previous, [field]: value }))

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      await register({
        email: form.email,
        password: form.password,
        ...(form.name.trim() === "" ? {} : { name: form.name.trim() }),
        ...(form.organization_name.trim() === "" ? {} : { organization_name: form.organization_name.trim() })
      })
      await signedIn(queryClient)
    })
  }

  return (
    <AuthLayout title="Create your account">
      <form onSubmit={submit} noValidate>
        <FormError error={error} fields={["name", "organization_name", "email", "password"]} />
        <Field label="Your name" name="name" value={form.name} onChange={set("name")} autoComplete="name" error={error} autoFocus />
        <Field label="Business name" name="organization_name" value={form.organization_name} onChange={set("organization_name")} autoComplete="organization" error={error} />
        <Field label="Work email" name="email" type="email" value={form.email} onChange={set("email")} autoComplete="email" error={error} required />
        <Field
          label="Password"
          name="password"
          type="password"
          value={form.password}
          onChange={set("password")}
          autoComplete="new-password"
          error={error}
          hint="At least 12 characters."
          required
        />
        <Button kind="primary" type="submit" busy={busy}>Create account</Button>
      </form>
      <p className="auth-footer">Already have an account? <Link to="/">Sign in</Link></p>
    </AuthLayout>
  )
}

const Shell = () => {
  const { path } = useLocation()
  const workspace = useWorkspace()
  const connection = useConnectionState()
  const [menuOpen, setMenuOpen] = useState(false)

  useEffect(() => {
    if (path === "/register" || path === "/sign-in") navigate("/", { replace: true })
  }, [path])
  useEffect(() => setMenuOpen(false), [path])
  // A new page takes the focus to its content, so a keyboard or screen reader user starts there, not in the menu.
  const firstPath = useRef(path)
  useEffect(() => {
    if (path !== firstPath.current) document.getElementById("main")?.focus({ preventScroll: true })
  }, [path])

  const platformAdmin = workspace.context.me.user.platform_admin
  useEffect(() => {
    let unmounted = false
    preloadEveryPage(platformAdmin, () => unmounted)
    return () => {
      unmounted = true
    }
  }, [platformAdmin])
  const found = findRoute(path, platformAdmin)
  // The platform's own pages need no store: an administrator without one still reaches them.
  const page = workspace.store === undefined && found?.route.platformAdmin !== true
    ? <NoStore />
    : found === undefined
    ? <NotFoundPage />
    : (
      <Suspense fallback={<Loading />}>
        <found.route.page params={found.params} />
      </Suspense>
    )
  const activePattern = found?.route.nav === undefined ? "/" + (path.split("/")[1] ?? "") : found.route.pattern

  return (
    <div className={`shell ${workspace.livemode ? "mode-live" : "mode-test"}`}>
      <a className="skip-link" href="#main">Skip to content</a>
      {workspace.livemode ? null : (
        <div className="test-banner" role="note">
          <strong>Test mode</strong> — you are viewing test data. No real money moves.
        </div>
      )}
      {connection === "reconnecting" ? <div className="connection-banner" role="status">Connection lost — reconnecting…</div> : null}
      <header className="topbar">
        <button
          type="button"
          className="icon-button menu-button"
          aria-label="Menu"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          ☰
        </button>
        <span className="brand"><span className="logo-mark" aria-hidden="true">K</span><span className="brand-name">KHQR Merchant</span></span>
        <StoreSwitcher />
        <ModeSwitch />
        <div className="topbar-user"><UserMenu /></div>
      </header>
      <div className="layout">
        <nav id="sidebar" className={`sidebar${menuOpen ? " open" : ""}`} aria-label="Main">
          {navigation(platformAdmin).map((group) => (
            <div key={group.section} className="nav-section">
              <span className="nav-section-title" id={`nav-${group.section}`}>{group.section}</span>
              <ul aria-labelledby={`nav-${group.section}`}>
                {group.items.map((item) => (
                  <li key={item.pattern}>
                    <Link to={item.pattern} className="nav-link" aria-current={activePattern === item.pattern ? "page" : undefined}>
                      {item.nav!.label}
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          ))}
          <div className="sidebar-user"><UserMenu /></div>
        </nav>
        <main id="main" className="content" tabIndex={-1}>
          {page}
        </main>
      </div>
    </div>
  )
}

const StoreSwitcher = () => {
  const workspace = useWorkspace()
  const id = useId()
  const organizations = workspace.context.me.organizations
  if (workspace.context.stores.length === 0) return <span className="store-switcher muted">No store yet</span>
  return (
    <div className="store-switcher">
      <label htmlFor={id} className="visually-hidden">Store</label>
      <select id={id} value={workspace.store?.id} onChange={(event) => workspace.selectStore(event.target.value)}>
        {organizations.map((organization) => {
          const stores = workspace.context.stores.filter((store) => store.organization_id === organization.id)
          return stores.length === 0 ? null : (
            <optgroup key={organization.id} label={organization.name}>
              {stores.map((store) => <option key={store.id} value={store.id}>{store.name}</option>)}
            </optgroup>
          )
        })}
      </select>
    </div>
  )
}

const ModeSwitch = () => {
  const workspace = useWorkspace()
  const liveAllowed = workspace.store?.live_mode === true
  return (
    <div className="mode-switch">
      <button
        type="button"
        role="switch"
        aria-checked={!workspace.livemode}
        className="switch"
        onClick={() => workspace.setLivemode(!workspace.livemode)}
        disabled={!liveAllowed}
        title={liveAllowed ? undefined : "Live mode opens once the store's KYC is approved and its provider credentials are set"}
      >
        <span className="switch-track" aria-hidden="true"><span className="switch-thumb" /></span>
        <span className="switch-label">Test mode</span>
      </button>
    </div>
  )
}

const UserMenu = () => {
  const workspace = useWorkspace()
  const queryClient = useQueryClient()
  const [busy, setBusy] = useState(false)
  const user = workspace.context.me.user
  const out = async () => {
    setBusy(true)
    try {
      await signOut()
    } finally {
      setBusy(false)
      queryClient.clear()
      navigate("/", { replace: true })
      await queryClient.resetQueries({ queryKey: CONTEXT_KEY })
    }
  }
  return (
    <div className="user-menu">
      <span className="user-email" title={user.email}>{user.name ?? user.email}</span>
      <Button kind="ghost" onClick={() => void out()} busy={busy}>Sign out</Button>
    </div>
  )
}

const NoStore = () => {
  const queryClient = useQueryClient()
  const workspace = useWorkspace()
  const [name, setName] = useState("")
  const create = useConsoleMutation((client, storeName: string) => client.CreateStore({ name: storeName }), {
    onSuccess: (store) => {
      workspace.selectStore(store.id)
      void queryClient.invalidateQueries({ queryKey: CONTEXT_KEY })
    }
  })
  return (
    <div className="page narrow-page">
      <div className="page-header"><h1>Create your first store</h1></div>
      <section className="card">
        <p className="muted">A store takes payments: each has its own KHQR merchant account, API keys and webhooks. It starts in test mode.</p>
        <form onSubmit={(event) => {
          event.preventDefault()
          create.mutate(name.trim())
        }} noValidate>
          <FormError error={create.error} fields={["name"]} />
          <Field label="Store name" name="name" value={name} onChange={setName} error={create.error} placeholder="Riverside Cafe" required autoFocus />
          <div><Button kind="primary" type="submit" busy={create.isPending}>Create store</Button></div>
        </form>
      </section>
    </div>
  )
}

const NotFoundPage = () => (
  <div className="page">
    <h1>Page not found</h1>
    <p><Link to="/">Back to the home page</Link></p>
  </div>
)
