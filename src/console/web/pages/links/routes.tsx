/** Payment links and invoices. */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const linksRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/payment-links", nav: { label: "Payment links", section: "Payments" }, page: lazyPage(() => import("./Links.tsx"), (m) => () => <m.LinksPage />) }
]
