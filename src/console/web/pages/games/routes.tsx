/** The games pages: the list (with the new-game form) and a game's page. */
import { type ConsoleRoute, lazyPage } from "../../route.ts"

export const gamesRoutes: ReadonlyArray<ConsoleRoute> = [
  { pattern: "/games", nav: { label: "Games", section: "Customers" }, page: lazyPage(() => import("./Games.tsx"), (m) => () => <m.GamesPage />) },
  { pattern: "/games/:id", page: lazyPage(() => import("./GameDetail.tsx"), (m) => ({ params }) => <m.GameDetailPage id={params["id"]!} />) }
]
