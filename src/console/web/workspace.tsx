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

/** The store and mode the tab chose last (or none), and what they come to in `context`. */
const chosenStoreId = () => sessionStorage.getItem(STORE_KEY)
const chosenLivemode = () => sessionStorage.getItem(MODE_KEY) === "true"
const resolve = (context: ConsoleContext, storeId: string | null, livemodeWanted: boolean) => {
  const store = context.stores.find((candidate) => candidate.id === storeId) ?? context.stores[0]
  // Live mode only where the store may use it: a store without it is always shown in test mode.
  return { store, livemode: livemodeWanted && store?.live_mode === true }
}

/** The workspace a page opened now shows: for asking for its data before it is drawn. */
export const openingWorkspace = (context: ConsoleContext) => resolve(context, chosenStoreId(), chosenLivemode())

export const WorkspaceProvider = ({ context, children }: { readonly context: ConsoleContext; readonly children: ReactNode }) => {
  const [storeId, setStoreId] = useState(chosenStoreId)
  const [livemodeWanted, setLivemodeWanted] = useState(chosenLivemode)
  const { livemode, store } = resolve(context, storeId, livemodeWanted)
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
