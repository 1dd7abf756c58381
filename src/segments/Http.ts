import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { SegmentsService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const SegmentsHttpLive = apiGroup(Api, "segments", (handlers) =>
  Effect.gen(function*() {
    const segments = yield* SegmentsService
    return handlers
      .handle("list", ({ path, urlParams }) => segments.list(path.storeId, urlParams))
      .handle("create", ({ path, payload }) => segments.create(path.storeId, payload))
      .handle("previewRules", ({ path, payload, urlParams }) => segments.previewRules(path.storeId, urlParams, payload))
      .handle("preview", ({ path, urlParams }) => segments.preview(path.id, urlParams))
      .handle("update", ({ path, payload }) => segments.update(path.id, payload))
      .handle("delete", ({ path }) => segments.remove(path.id))
  }))
