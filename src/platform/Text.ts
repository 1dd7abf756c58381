/**
 * Text shown to the public about a person: what a public page may say of a customer without naming them.
 */

/** A name with all but each word's first letter hidden ("Sokha Chan" → "S**** C***"). */
export const maskName = (name: string | null): string | null =>
  name === null ? null : name.split(/\s+/).filter((word) => word !== "").map((word) => {
    const [first = "", ...rest] = Array.from(word)
    return first + "*".repeat(rest.length)
  }).join(" ")
