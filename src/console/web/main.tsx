/** The merchant console in the browser: React over the typed console RPC (rpc.ts). */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"
import { currentPath } from "./router.tsx"
import { findRoute } from "./routes.tsx"
import type { ConsoleFailure } from "./rpc.ts"
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

// The opened page's code is fetched while the session is checked, rather than once the shell is drawn.
findRoute(currentPath(), true)?.route.page.preload()

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>
)
