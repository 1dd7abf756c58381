/** The account pages of the signed-in console: the team (members and invitations) and the user's profile. */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const accountRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/team", nav: { label: "Team", section: "Settings" }, page: lazyPage(() => import("./Team.tsx"), (m) => () => <m.TeamPage />) },
  { pattern: "/profile", nav: { label: "Profile", section: "Settings" }, page: lazyPage(() => import("./Profile.tsx"), (m) => () => <m.ProfilePage />) }
]
