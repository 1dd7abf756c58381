/**
 * The page the password-reset e-mail links to (`/reset-password?token=…`): a form for the new password
 * that posts the token and the password to `POST /auth/reset-password` and says how it went. It uses
 * the hosted pages' layout, so the nonce Content-Security-Policy applies; the token reaches the script
 * through an attribute, and the page is never cached nor sends a Referer (the token is a secret).
 */
import { HostedPage, useCopy } from "../platform/pages/Document.tsx"

const RESET_STYLES = `
  .done { color: #067647; font-weight: 600; }
`

const RESET_SCRIPT = `
const form = document.getElementById("reset-form");
if (form) {
  const button = document.getElementById("reset-button");
  const errorEl = document.getElementById("error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorEl.textContent = "";
    const password = document.getElementById("password").value;
    if (password !== document.getElementById("password-again").value) {
      errorEl.textContent = data.text.mismatch;
      return;
    }
    button.disabled = true;
    try {
      const response = await fetch("/auth/reset-password", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ token: form.dataset.token, password })
      });
      const answer = await response.json().catch(() => null);
      if (response.status === 201) {
        const done = document.createElement("p");
        done.className = "done";
        done.id = "done";
        done.textContent = data.text.done + " ";
        const signIn = document.createElement("a");
        signIn.href = "/console";
        signIn.textContent = data.text.signIn;
        done.append(signIn);
        form.replaceWith(done);
        return;
      }
      errorEl.textContent = (answer && answer.error && answer.error.message) || data.text.failed;
    } catch (error) {
      errorEl.textContent = data.text.network;
    }
    button.disabled = false;
  });
}
`

const MIN_PASSWORD_LENGTH = 10

const ResetPassword = ({ token }: { readonly token: string | undefined }) => {
  const copy = useCopy()
  const data = {
    text: {
      mismatch: copy.text("reset.mismatch"),
      done: copy.text("reset.done"),
      signIn: copy.text("reset.signIn"),
      failed: copy.text("reset.failed"),
      network: copy.text("reset.network")
    }
  }
  return (
    <HostedPage
      title={copy.text("reset.title")}
      branding={{ name: copy.text("reset.account"), logo_url: null, primary_color: null, accent_color: null }}
      styles={RESET_STYLES}
      script={{ data, source: RESET_SCRIPT }}
    >
      <p className="title">{copy.text("reset.heading")}</p>
      {token === undefined || token === ""
        ? <p className="error" id="error">{copy.text("reset.incomplete")}</p>
        : (
          <form id="reset-form" data-token={token} noValidate>
            <label>
              {copy.text("reset.password", { count: MIN_PASSWORD_LENGTH })}
              <input id="password" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} maxLength={256} required />
            </label>
            <label>
              {copy.text("reset.again")}
              <input id="password-again" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} maxLength={256} required />
            </label>
            <p className="error" id="error" role="alert"></p>
            <button id="reset-button" type="submit">{copy.text("reset.submit")}</button>
          </form>
        )}
    </HostedPage>
  )
}

/** The reset page for `token`; without one, it says the link is incomplete. */
export const resetPasswordPage = (token: string | undefined) => <ResetPassword token={token} />
