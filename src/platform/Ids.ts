/**
 * New object ids. Their shape, prefixes and branded types live in `domain/Ids.ts`; making one needs
 * the secure random source, so it lives here.
 */
import { randomBase62 } from "./Crypto.ts"
import { type Id, ID_RANDOM_PART_LENGTH, type IdPrefix } from "../../domain/Ids.ts"

export { type Id, IdOf, IdPrefixes, type IdPrefix, isIdOf, StrictIdOf } from "../../domain/Ids.ts"

/** A new random id of the given kind. */
export const newId = <P extends IdPrefix>(prefix: P): Id<P> => `${prefix}_${randomBase62(ID_RANDOM_PART_LENGTH)}` as Id<P>
