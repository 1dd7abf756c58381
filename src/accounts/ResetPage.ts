/**
 * The page the password-reset e-mail links to (`/reset-password?token=…`): a form for the new password
 * that posts the token and the password to `POST /auth/reset-password` and says how it went. It uses
 * the hosted pages' layout, so the nonce Content-Security-Policy applies; the token reaches the script
 * through an escaped attribute, and the page is never cached nor sends a Referer (the token is a secret).
 */
import { escapeHtml, page } from "../platform/Html.ts"

const PLATFORM = { name: "Merchant account", logo_url: null, primary_color: null, accent_color: null }

const FORM_STYLES = `<style>
  form { display: grid; gap: 10px; margin-top: 16px; text-align: left; }
  label { font-size: .9rem; color: #556; display: grid; gap: 4px; }
  input { font: inherit; padding: 10px 12px; border: 1px solid #ccd; border-radius: 8px; }
  button { font: inherit; font-weight: 600; padding: 12px; border: 0; border-radius: 8px; background: var(--primary);
           color: #fff; cursor: pointer; }
  button[disabled] { opacity: .6; cursor: wait; }
  .error { color: #b42318; min-height: 1.2em; margin: 0; }
  .done { color: #067647; font-weight: 600; }
</style>`

const RESET_SCRIPT = `
(() => {
  const form = document.getElementById("reset-form");
  if (!form) return;
  const button = document.getElementById("reset-button");
  const errorEl = document.getElementById("error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorEl.textContent = "";
    const password = document.getElementById("password").value;
    if (password !== document.getElementById("password-again").value) {
      errorEl.textContent = "The two passwords are not the same.";
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
        form.outerHTML = '<p class="done" id="done"></p>';
        document.getElementById("done").textContent = (answer && answer.message) || "Your password was changed.";
        return;
      }
      errorEl.textContent = (answer && answer.error && answer.error.message) || "The password could not be changed.";
    } catch (error) {
      errorEl.textContent = "The password could not be changed. Check your connection and try again.";
    }
    button.disabled = false;
  });
})();
`

/** The reset page for `token`; without one, it says the link is incomplete. */
export const resetPasswordPage = (token: string | undefined) =>
  page({
    title: "Reset your password",
    merchant: PLATFORM,
    body: `${FORM_STYLES}
  <p class="title">Choose a new password</p>
  ${
      token === undefined || token === ""
        ? `<p class="error" id="error">This link is incomplete: open the whole link from the e-mail, or ask for a new one.</p>`
        : `<form id="reset-form" data-token="${escapeHtml(token)}" novalidate>
    <label>New password (at least 10 characters)
      <input id="password" type="password" autocomplete="new-password" minlength="10" maxlength="256" required>
    </label>
    <label>The same again
      <input id="password-again" type="password" autocomplete="new-password" minlength="10" maxlength="256" required>
    </label>
    <p class="error" id="error" role="alert"></p>
    <button id="reset-button" type="submit">Set the new password</button>
  </form>`
    }`,
    script: RESET_SCRIPT
  })
