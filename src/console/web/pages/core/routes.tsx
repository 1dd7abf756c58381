/** The console's first pages: home, payments, webhooks, API keys and the user's security settings. */
import { type ConsoleRoute, lazyPage } from "../../route.ts"
import { prefetchPayments } from "../PaymentsList.ts"

export const coreRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/", nav: { label: "Home", section: "Payments" }, page: lazyPage(() => import("../Home.tsx"), (m) => () => <m.HomePage />) },
  {
    pattern: "/payments",
    nav: { label: "Payments", section: "Payments" },
    page: lazyPage(() => import("../Payments.tsx"), (m) => () => <m.PaymentsPage />),
    prefetch: prefetchPayments
  },
  {
    pattern: "/payments/:id",
    page: lazyPage(() => import("../PaymentDetail.tsx"), (m) => ({ params }) => <m.PaymentDetailPage id={params["id"]!} />)
  },
  { pattern: "/webhooks", nav: { label: "Webhooks", section: "Developers" }, page: lazyPage(() => import("../Webhooks.tsx"), (m) => () => <m.WebhooksPage />) },
  {
    pattern: "/webhooks/:id",
    page: lazyPage(() => import("../Webhooks.tsx"), (m) => ({ params }) => <m.WebhookEndpointPage id={params["id"]!} />)
  },
  { pattern: "/api-keys", nav: { label: "API keys", section: "Developers" }, page: lazyPage(() => import("../ApiKeys.tsx"), (m) => () => <m.ApiKeysPage />) },
  { pattern: "/security", nav: { label: "Security", section: "Settings" }, page: lazyPage(() => import("../Security.tsx"), (m) => () => <m.SecurityPage />) }
]
