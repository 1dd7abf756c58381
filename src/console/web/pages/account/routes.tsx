/** The account pages of the signed-in console: the user's profile (the team is under Settings). */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const accountRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/profile", nav: { label: "Profile", section: "Settings" }, page: lazyPage(() => import("./Profile.tsx"), (m) => () => <m.ProfilePage />) }
]
