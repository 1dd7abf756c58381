/** The insights pages (analytics, ledger, risk, AI) and the store's revenue shares (a setting). */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const insightsRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/analytics", nav: { label: "Analytics", section: "Insights" }, page: lazyPage(() => import("./Analytics.tsx"), (m) => () => <m.AnalyticsPage />) },
  { pattern: "/ledger", nav: { label: "Ledger", section: "Insights" }, page: lazyPage(() => import("./Ledger.tsx"), (m) => () => <m.LedgerPage />) },
  { pattern: "/risk", nav: { label: "Risk", section: "Insights" }, page: lazyPage(() => import("./Risk.tsx"), (m) => () => <m.RiskPage />) },
  { pattern: "/ai", nav: { label: "AI assistant", section: "Insights" }, page: lazyPage(() => import("./Ai.tsx"), (m) => () => <m.AiPage />) },
  {
    pattern: "/revenue-shares",
    nav: { label: "Revenue shares", section: "Settings" },
    page: lazyPage(() => import("./RevenueShares.tsx"), (m) => () => <m.RevenueSharesPage />)
  }
]
