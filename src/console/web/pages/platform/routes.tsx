/** The platform administrators' pages: shown only to them (the server refuses their RPCs to anyone else). */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

const operations = () => import("./Operations.tsx")

export const platformRoutes: ReadonlyArray<ConsoleRoute> = [
  {
    pattern: "/platform/verifications",
    platformAdmin: true,
    nav: { label: "KYC reviews", section: "Platform" },
    page: lazyPage(() => import("./Verifications.tsx"), (m) => () => <m.VerificationsPage />)
  },
  {
    pattern: "/platform/settings",
    platformAdmin: true,
    nav: { label: "Platform settings", section: "Platform" },
    page: lazyPage(() => import("./PlatformSettings.tsx"), (m) => () => <m.PlatformSettingsPage />)
  },
  { pattern: "/platform/security", platformAdmin: true, nav: { label: "Security posture", section: "Platform" }, page: lazyPage(operations, (m) => () => <m.SecurityPosturePage />) },
  { pattern: "/platform/monitoring", platformAdmin: true, nav: { label: "Monitoring", section: "Platform" }, page: lazyPage(operations, (m) => () => <m.MonitoringPage />) },
  { pattern: "/platform/ai-usage", platformAdmin: true, nav: { label: "AI usage", section: "Platform" }, page: lazyPage(operations, (m) => () => <m.PlatformAiUsagePage />) },
  { pattern: "/platform/ledger", platformAdmin: true, nav: { label: "Ledger across stores", section: "Platform" }, page: lazyPage(operations, (m) => () => <m.PlatformLedgerPage />) }
]
