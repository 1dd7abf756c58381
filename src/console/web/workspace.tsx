/**
 * Where the user is working: the organization, the store and the mode (test or live). Client state only
 * (the server authorizes every call on its own); remembered for the tab so a reload keeps it.
 */
import { createContext, type ReactNode, useContext, useMemo, useState } from "react"
import type { ConsoleContext, ConsoleStore } from "../../../domain/console/Core.ts"

export interface Workspace {
  readonly context: ConsoleContext
  readonly store: ConsoleStore | undefined
  readonly livemode: boolean
  readonly selectStore: (storeId: string) => void
  readonly setLivemode: (livemode: boolean) => void
}

const WorkspaceContext = createContext<Workspace | undefined>(undefined)

const STORE_KEY = "console.store"
const MODE_KEY = "console.livemode"

export const WorkspaceProvider = ({ context, children }: { readonly context: ConsoleContext; readonly children: ReactNode }) => {
  const [storeId, setStoreId] = useState(() => sessionStorage.getItem(STORE_KEY))
  const [livemodeWanted, setLivemodeWanted] = useState(() => sessionStorage.getItem(MODE_KEY) === "true")
  const store = context.stores.find((candidate) => candidate.id === storeId) ?? context.stores[0]
  // Live mode only where the store may use it: a store without it is always shown in test mode.
  const livemode = livemodeWanted && store?.live_mode === true
  const value = useMemo<Workspace>(() => ({
    context,
    store,
    livemode,
    selectStore: (id) => {
      sessionStorage.setItem(STORE_KEY, id)
      setStoreId(id)
    },
    setLivemode: (next) => {
      sessionStorage.setItem(MODE_KEY, String(next))
      setLivemodeWanted(next)
    }
  }), [context, store, livemode])
  return <WorkspaceContext.Provider value={value}>{children}</WorkspaceContext.Provider>
}

export const useWorkspace = (): Workspace => {
  const workspace = useContext(WorkspaceContext)
  if (workspace === undefined) throw new Error("useWorkspace outside WorkspaceProvider")
  return workspace
}
