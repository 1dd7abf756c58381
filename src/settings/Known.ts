/**
 * The platform settings the service knows of. A known key is always listed (set or not), carries a
 * description, and falls back to the environment variable of its name in upper case. An area that
 * needs a new integration setting adds one line here.
 *
 * Only known keys read the environment: were any key to, an administrator could read (masked) or
 * probe any variable of the process — `master_key`, `database_url` — through these routes.
 */
export const KnownSettings: Readonly<Record<string, string>> = {
  telegram_bot_token: "Bot token of the messaging app (Telegram) used for store notifications",
  telegram_api_base_url: "Notifications: base URL of the Telegram Bot API (default https://api.telegram.org)",
  whatsapp_api_base_url: "Notifications: base URL of the WhatsApp Cloud API, with its version (default https://graph.facebook.com/v21.0)",
  whatsapp_api_token: "Notifications: access token (Bearer) of the WhatsApp Cloud API",
  whatsapp_phone_number_id: "Notifications: the WhatsApp Business phone number id messages are sent from (POST {base}/{id}/messages)",
  sms_api_base_url: "Notifications: base URL of Twilio's API (default https://api.twilio.com)",
  sms_api_token: "Notifications: Twilio auth token (basic auth with the account SID)",
  sms_account_sid: "Notifications: Twilio account SID (AC…)",
  sms_from_number: "Notifications: the Twilio number SMS are sent from (E.164, such as +15017122661)",
  sms_messaging_service_sid: "Notifications: a Twilio Messaging Service (MG…) to send from instead of sms_from_number",
  signal_api_base_url: "Notifications: base URL of a signal-cli-rest-api gateway (POST {base}/v2/send; default http://localhost:8080)",
  signal_api_token: "Notifications: bearer token for a proxy in front of the Signal gateway (optional; the gateway has no authentication)",
  signal_sender_number: "Notifications: the Signal number registered with the gateway, that messages are sent from",
  bakong_api_token: "API token of the Bakong (KHQR) payment provider",
  bakong_base_url: "Base address of the Bakong (KHQR) payment provider's API",
  ai_api_key: "API key of the AI provider used for generated copy and summaries",
  ai_base_url: "AI: base URL of an OpenAI-compatible chat-completions API, such as https://api.openai.com/v1",
  ai_model: "AI: model name sent to the chat-completions API, such as gpt-4o-mini",
  ai_input_cost_per_1k: "AI: US dollars per 1,000 input tokens of the configured model (default 0.00015)",
  ai_output_cost_per_1k: "AI: US dollars per 1,000 output tokens of the configured model (default 0.0006)",
  ai_timeout_ms: "AI: how long one call to the chat-completions API may take, in milliseconds (default 15000)",
  ai_monthly_cost_cap_usd: "AI: the most each store may spend on AI calls in a calendar month, in US dollars (unset: no cap)",
  billing_store_id: "Billing: the store (str_…) whose payments carry subscription invoices; unset, the platform's built-in test-mode store",
  risk_velocity_max: "Risk: paid payments one customer may make in 10 minutes before a velocity case opens (default 5)",
  risk_large_amount_usd: "Risk: a USD payment above this amount opens a large-amount case (default 1000.00)",
  risk_large_amount_khr: "Risk: a KHR payment above this amount opens a large-amount case (default 4000000)",
  risk_refund_ratio: "Risk: a store's refunds over its paid amount in 24 hours above this ratio open a case (default 0.5)"
}

export const isKnownSetting = (key: string): boolean => Object.hasOwn(KnownSettings, key)

/** The environment variable a known key falls back to. */
export const environmentVariableOf = (key: string): string => key.toUpperCase()

/**
 * The settings that are base URLs of a provider's API. Saved only as http(s) URLs; the security posture
 * warns when one (stored or from the environment) points at a loopback, link-local or private address.
 */
export const BaseUrlSettings: ReadonlyArray<string> = Object.keys(KnownSettings).filter((key) => key.endsWith("_base_url"))

export const isBaseUrlSetting = (key: string): boolean => BaseUrlSettings.includes(key)
