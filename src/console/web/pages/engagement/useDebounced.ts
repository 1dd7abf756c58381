/** A value that follows `value` once it has stopped changing for `delayMs`: one request per pause in typing. */
import { useEffect, useState } from "react"

export const useDebounced = <A>(value: A, delayMs = 300): A => {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs)
    return () => clearTimeout(timer)
  }, [value, delayMs])
  return settled
}
