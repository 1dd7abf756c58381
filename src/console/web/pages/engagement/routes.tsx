/** The engagement pages: customers (with the customer 360), loyalty, referrals, segments and promotions. */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const engagementRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/customers", nav: { label: "Customers", section: "Customers" }, page: lazyPage(() => import("./Customers.tsx"), (m) => () => <m.CustomersPage />) },
  {
    pattern: "/customers/:id",
    page: lazyPage(() => import("./CustomerDetail.tsx"), (m) => ({ params }) => <m.CustomerDetailPage id={params["id"]!} />)
  },
  { pattern: "/loyalty", nav: { label: "Loyalty", section: "Customers" }, page: lazyPage(() => import("./Loyalty.tsx"), (m) => () => <m.LoyaltyPage />) },
  { pattern: "/referrals", nav: { label: "Referrals", section: "Customers" }, page: lazyPage(() => import("./Referrals.tsx"), (m) => () => <m.ReferralsPage />) },
  { pattern: "/segments", nav: { label: "Segments", section: "Customers" }, page: lazyPage(() => import("./Segments.tsx"), (m) => () => <m.SegmentsPage />) },
  { pattern: "/promotions", nav: { label: "Promotions", section: "Customers" }, page: lazyPage(() => import("./Promotions.tsx"), (m) => () => <m.PromotionsPage />) },
  {
    pattern: "/promotions/:id",
    page: lazyPage(() => import("./PromotionDetail.tsx"), (m) => ({ params }) => <m.PromotionDetailPage id={params["id"]!} />)
  }
]
