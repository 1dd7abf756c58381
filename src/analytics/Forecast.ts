/**
 * The revenue forecast, per currency, in minor units:
 *
 *   1. A least-squares line through the history, day t = 0 … n−1: b = Σ(t − t̄)(y − ȳ) / Σ(t − t̄)², a = ȳ − b·t̄.
 *   2. The mean of the last 7 days' residuals from the line, r = mean(y_t − (a + b·t)) (the recent level the
 *      line misses: a 7-day moving average of what is left).
 *   3. Day k after the history (k = 1 … days): max(0, round(a + b·(n − 1 + k) + r)).
 *
 * A straight-line history has zero residuals and forecasts the line; an empty or all-zero history
 * forecasts zeros; one day of history is a flat line at its value.
 */
export const MOVING_AVERAGE_DAYS = 7

export const forecastSeries = (history: ReadonlyArray<number>, days: number): ReadonlyArray<number> => {
  const n = history.length
  if (n === 0) return Array.from({ length: days }, () => 0)
  const meanT = (n - 1) / 2
  const meanY = history.reduce((sum, y) => sum + y, 0) / n
  let covariance = 0
  let variance = 0
  history.forEach((y, t) => {
    covariance += (t - meanT) * (y - meanY)
    variance += (t - meanT) ** 2
  })
  const slope = variance === 0 ? 0 : covariance / variance
  const intercept = meanY - slope * meanT
  const recent = history.slice(-MOVING_AVERAGE_DAYS)
  const offset = recent.reduce((sum, y, i) => sum + (y - (intercept + slope * (n - recent.length + i))), 0) / recent.length
  return Array.from({ length: days }, (_, i) => Math.max(0, Math.round(intercept + slope * (n + i) + offset)))
}
