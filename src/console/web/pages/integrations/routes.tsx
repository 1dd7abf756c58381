/** The integrations pages: connectors and notification channels. */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const integrationsRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/connectors", nav: { label: "Connectors", section: "Developers" }, page: lazyPage(() => import("./Connectors.tsx"), (m) => () => <m.ConnectorsPage />) },
  {
    pattern: "/notifications",
    nav: { label: "Notifications", section: "Developers" },
    page: lazyPage(() => import("./Notifications.tsx"), (m) => () => <m.NotificationsPage />)
  }
]
