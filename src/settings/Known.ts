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
  bakong_api_token: "API token of the Bakong (KHQR) payment provider",
  bakong_base_url: "Base address of the Bakong (KHQR) payment provider's API",
  ai_api_key: "API key of the AI provider used for generated copy and summaries"
}

export const isKnownSetting = (key: string): boolean => Object.hasOwn(KnownSettings, key)

/** The environment variable a known key falls back to. */
export const environmentVariableOf = (key: string): string => key.toUpperCase()
