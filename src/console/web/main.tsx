/** The merchant console in the browser: React over the typed console RPC (rpc.ts). */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { CONSOLE_CONTEXT_META, ConsoleContext } from "../../../domain/console/Core.ts"
import { App, CONTEXT_KEY } from "./App.tsx"
import { takeCarried } from "./carried.ts"
import { currentPath } from "./router.tsx"
import { findRoute } from "./routes.tsx"
import type { ConsoleFailure } from "./rpc.ts"
import { openingWorkspace } from "./workspace.tsx"
// uPlot's own few rules first, so styles.css can adjust them; pages load lazily, so every stylesheet is here.
import "uplot/dist/uPlot.min.css"
import "./styles.css"

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // Only a lost connection is worth retrying; a refusal will be refused again.
      retry: (count, error) => (error as ConsoleFailure).connectionLost && count < 5,
      retryDelay: (attempt) => Math.min(500 * 2 ** attempt, 5000),
      refetchOnWindowFocus: false,
      staleTime: 5_000
    },
    mutations: { retry: false }
  }
})

/**
 * A page opened with a session carries the user's context (src/console/Context.ts): the first screen
 * starts from it and asks for its own data at once (or takes what the page carried for it, carried.ts).
 * Without it (signed out, or unreadable), the app asks for the context with the `Context` call as it does
 * after signing in.
 */
const context = takeCarried(CONSOLE_CONTEXT_META, ConsoleContext)
const opened = findRoute(currentPath(), context?.me.user.platform_admin === true)
if (context !== undefined) {
  queryClient.setQueryData(CONTEXT_KEY, context)
  const { livemode, store } = openingWorkspace(context)
  if (store !== undefined) opened?.route.prefetch?.({ storeId: store.id, livemode }, queryClient)
}

// The opened page's code (preloaded with the HTML) is awaited before the first drawing, so the first screen
// shows the page itself rather than a loading state that React holds for its minimum time.
await opened?.route.page.preload()

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>
)
