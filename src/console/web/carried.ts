/**
 * What the console's page carries in its HTML for the first screen (src/console/Context.ts): a meta element's
 * content, the JSON encoding of a value, URI-encoded. Each is read once and emptied; an empty or unreadable
 * one is none, and the app then asks for the value with a call, as it does after signing in.
 */
import { Either, Schema } from "effect"

export const takeCarried = <A, I>(name: string, schema: Schema.Schema<A, I>): A | undefined => {
  const element = document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)
  const carried = element?.content ?? ""
  if (element === null || carried === "") return undefined
  element.content = ""
  try {
    return Either.getOrUndefined(Schema.decodeUnknownEither(schema)(JSON.parse(decodeURIComponent(carried))))
  } catch {
    return undefined
  }
}
