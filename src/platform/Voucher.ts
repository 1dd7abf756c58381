/**
 * Voucher codes: 12 characters of an alphabet without look-alikes (no 0/O, 1/I), read out at a counter
 * as three groups of four. 32 symbols make each character exactly 5 random bits (a byte modulo 32 is
 * unbiased), 60 bits in all: unguessable, and a collision (refused by the unique index) is negligible.
 */
import { randomBytes } from "node:crypto"

// No 0, 1, I or O: L is kept, since its look-alike 1 is not in the alphabet.
const VOUCHER_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
const GROUPS = 3
const GROUP_LENGTH = 4

export const newVoucherCode = (): string => {
  const bytes = randomBytes(GROUPS * GROUP_LENGTH)
  const characters = Array.from(bytes, (byte) => VOUCHER_ALPHABET[byte % 32])
  return Array.from({ length: GROUPS }, (_, group) =>
    characters.slice(group * GROUP_LENGTH, (group + 1) * GROUP_LENGTH).join("")).join("-")
}
