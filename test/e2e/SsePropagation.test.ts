/**
 * Live status across processes: a runner and two API nodes on one PostgreSQL. A checkout page holds
 * `GET /checkout/:id/events` on API node A while the payment is scanned and paid through API node B (and
 * changed on the runner): the frames arrive on A, because each process LISTENs on PostgreSQL
 * (platform/ChangeFeed.ts) and the runner NOTIFYs once each change commits.
 *
 * Skipped without a PostgreSQL server (or with TEST_DATABASE=embedded).
 */
import * as Sse from "@effect/experimental/Sse"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { postgresAvailable } from "../support/TestDatabase.ts"
import {
  carefulClient,
  type ClusterDatabase,
  createDatabase,
  LocalCluster,
  makeMerchant,
  succeed,
  untilReady
} from "../support/Cluster.ts"

const enabled = process.env["TEST_DATABASE"] !== "embedded" && await postgresAvailable()

interface Frame {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: any
}

/**
 * Reads an SSE response frame by frame; `onOpen` runs once the response has started (the server has
 * subscribed by then), and reading stops after a frame `until` accepts, or after `timeoutMs`. Raw: the
 * typed client would read the stream only as one text once it ended.
 */
const readEvents = async (
  url: string,
  options: { readonly onOpen: () => Promise<void>; readonly until: (frame: Frame) => boolean; readonly timeoutMs: number }
) => {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), options.timeoutMs)
  const frames: Array<Frame> = []
  const response = await fetch(url, { headers: { accept: "text/event-stream" }, signal: controller.signal })
  const opened = options.onOpen()
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let satisfied = false
  const parser = Sse.makeParser((event) => {
    if (event._tag !== "Event" || satisfied) return
    const frame = { id: event.id, event: event.event, data: JSON.parse(event.data) }
    frames.push(frame)
    satisfied = options.until(frame)
  })
  try {
    while (!satisfied) {
      const { done, value } = await reader.read()
      if (done) break
      parser.feed(value)
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
  await opened
  return { status: response.status, contentType: response.headers.get("content-type"), frames }
}

describe.skipIf(!enabled)("live status across processes: one runner, two API nodes", () => {
  let db: ClusterDatabase
  let cluster: LocalCluster
  let nodeA = ""
  let nodeB = ""

  beforeAll(async () => {
    db = await createDatabase("test_sse")
    cluster = new LocalCluster(db)
    await cluster.addRunner()
    // Each node names itself in links; both would be one public origin behind a load balancer.
    const [a, b] = await Promise.all([cluster.addApi(), cluster.addApi()])
    nodeA = a!.baseUrl
    nodeB = b!.baseUrl
    await cluster.allShardsHeldBy()
    for (const node of [nodeA, nodeB]) await untilReady(node)
  }, 180_000)

  afterAll(async () => {
    await cluster?.killAll()
    await db?.drop()
  }, 60_000)

  it("delivers the paid frame on node A for a payment paid through node B", { timeout: 120_000 }, async () => {
    const { secret } = await makeMerchant(nodeB)
    const api = await carefulClient(nodeB, secret)
    const payment = await succeed("create", api.payments.create({ payload: { amount: "7.25", currency: "USD" }, headers: {} }))
    const simulate = (status: "scanned" | "paid") =>
      succeed(status, api.payments.simulate({ path: { id: payment.id }, payload: { status } }))

    let paidThroughB = 0
    const stream = await readEvents(`${nodeA}/checkout/${payment.id}/events`, {
      timeoutMs: 60_000,
      until: (frame) => frame.data.status === "paid",
      onOpen: async () => {
        await simulate("scanned")
        await simulate("paid")
        paidThroughB = performance.now()
      }
    })
    const arrivedOnA = performance.now()

    expect(stream.status).toBe(200)
    expect(stream.contentType).toContain("text/event-stream")
    expect(stream.frames.map((frame) => frame.data.status)).toEqual(["pending", "scanned", "paid"])
    expect(stream.frames.every((frame) => frame.event === "payment.status" && frame.data.id === payment.id)).toBe(true)
    expect(stream.frames.map((frame) => Number(frame.id))).toEqual([1, 2, 3])
    expect(stream.frames.at(-1)!.data.amount).toBe("7.25")
    console.log(`SSE across processes: paid through node B → frame on node A ${Math.max(0, arrivedOnA - paidThroughB).toFixed(0)} ms after B answered`)
  })
})
