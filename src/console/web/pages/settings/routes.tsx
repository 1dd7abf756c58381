/** The settings pages: team, store (branding, credentials, live mode), branches, verification, billing. */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const settingsRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/settings/store", nav: { label: "Store", section: "Settings" }, page: lazyPage(() => import("./Store.tsx"), (m) => () => <m.StoreSettingsPage />) },
  { pattern: "/settings/branches", nav: { label: "Branches", section: "Settings" }, page: lazyPage(() => import("./Branches.tsx"), (m) => () => <m.BranchesPage />) },
  { pattern: "/settings/team", nav: { label: "Team", section: "Settings" }, page: lazyPage(() => import("./Team.tsx"), (m) => () => <m.TeamPage />) },
  { pattern: "/settings/verification", nav: { label: "Verification", section: "Settings" }, page: lazyPage(() => import("./Verification.tsx"), (m) => () => <m.VerificationPage />) },
  { pattern: "/settings/billing", nav: { label: "Billing", section: "Settings" }, page: lazyPage(() => import("./Billing.tsx"), (m) => () => <m.BillingPage />) }
]
