/** The connector marketplace, as data: each item's key, what it is for and the config it takes. */
import { ConfigField, MarketplaceItem } from "../../domain/Connectors.ts"

const url = new ConfigField({ key: "url", label: "Delivery URL", secret: false, required: true })
const field = (key: string, label: string, secret: boolean, required = false) => new ConfigField({ key, label, secret, required })

export const Catalog: ReadonlyArray<MarketplaceItem> = [
  new MarketplaceItem({
    key: "webhook",
    name: "Signed webhook",
    description: "Every selected event POSTed to a URL, signed with Standard Webhooks headers.",
    category: "developer",
    config_fields: [url]
  }),
  new MarketplaceItem({
    key: "google_sheets",
    name: "Spreadsheet row append",
    description: "Appends a row per event through a spreadsheet's web-app endpoint.",
    category: "reporting",
    config_fields: [url, field("sheet_name", "Sheet name", false), field("api_key", "Web-app key", true)]
  }),
  new MarketplaceItem({
    key: "slack_webhook",
    name: "Chat incoming webhook",
    description: "Posts each event to a chat channel's incoming-webhook URL.",
    category: "messaging",
    config_fields: [url, field("channel", "Channel", false)]
  }),
  new MarketplaceItem({
    key: "shopify_orders",
    name: "Store order sync",
    description: "Sends paid and refunded payments to an online store's order endpoint.",
    category: "commerce",
    config_fields: [url, field("shop_domain", "Shop domain", false, true), field("access_token", "Access token", true, true)]
  }),
  new MarketplaceItem({
    key: "accounting_export",
    name: "Accounting export",
    description: "Sends payments and refunds to an accounting system's import endpoint.",
    category: "accounting",
    config_fields: [url, field("api_key", "API key", true, true)]
  })
]

export const catalogItem = (key: string): MarketplaceItem | undefined => Catalog.find((item) => item.key === key)
