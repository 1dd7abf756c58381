import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { prefersHtml } from "../platform/Html.ts"
import { AppConfig } from "../platform/Config.ts"
import { idempotentResponse } from "../platform/IdempotentResponse.ts"
import { RateLimiter, type RateLimitRule } from "../platform/RateLimit.ts"
import { withRetryAfter } from "../platform/RetryAfter.ts"
import { renderHostedPage } from "../platform/pages/Document.tsx"
import { gamePage, playPage } from "./Page.tsx"
import { GamesService } from "./Service.ts"
import { apiGroup } from "../platform/WireResponses.ts"

export const GamesConsoleHttpLive = apiGroup(Api, "gamesConsole", (handlers) =>
  Effect.gen(function*() {
    const games = yield* GamesService
    return handlers
      .handle("list", ({ path, urlParams }) => games.list(path.storeId, urlParams))
      .handle("create", ({ path, payload }) => games.create(path.storeId, payload))
      .handle("retrieve", ({ path }) => games.retrieve(path.gameId))
      .handle("update", ({ path, payload }) => games.update(path.gameId, payload))
      .handle("delete", ({ path }) => games.remove(path.gameId))
      .handle("addPrize", ({ path, payload }) => games.addPrize(path.gameId, payload))
      .handle("updatePrize", ({ path, payload }) => games.updatePrize(path.prizeId, payload))
      .handle("deletePrize", ({ path }) => games.deletePrize(path.prizeId))
      .handle("plays", ({ path, urlParams }) => games.plays(path.gameId, urlParams))
      .handle("stats", ({ path }) => games.stats(path.gameId))
      .handle("issue", ({ path, payload }) => games.issue(path.gameId, payload.customer_id))
  }))

export const GamesHttpLive = apiGroup(Api, "games", (handlers) =>
  Effect.gen(function*() {
    const games = yield* GamesService
    return handlers
      .handle("play", ({ headers, path, payload }) =>
        games.play(path.id, payload, headers["idempotency-key"]).pipe(Effect.map(idempotentResponse)))
      .handle("reveal", ({ path }) => games.reveal(path.id))
      .handle("customerPlays", ({ path, urlParams }) => games.customerPlays(path.id, urlParams))
  }))

const acceptHeader = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["accept"])

export const HostedGamesHttpLive = apiGroup(Api, "hostedGames", (handlers) =>
  Effect.gen(function*() {
    const games = yield* GamesService
    const limiter = yield* RateLimiter
    const { rateLimits } = yield* AppConfig
    // Plays and reveals from one address share a count; each customer's plays and each card's reveals have their own.
    const playsPerAddress: RateLimitRule = {
      name: "hosted-play:address",
      limit: rateLimits.hostedPlaysPerAddressPerMinute,
      windowSeconds: 60
    }
    const playsPerCustomer: RateLimitRule = {
      name: "hosted-play:customer",
      limit: rateLimits.hostedPlaysPerCustomerPerMinute,
      windowSeconds: 60
    }
    const revealsPerPlay: RateLimitRule = { name: "card-reveal:play", limit: rateLimits.cardRevealsPerPlayPerMinute, windowSeconds: 60 }
    return handlers
      .handle("game", ({ path, urlParams }) =>
        Effect.gen(function*() {
          yield* withRetryAfter(limiter.admitPageView)
          const game = yield* games.hostedGame(path.gameId, urlParams.c, urlParams.t)
          return prefersHtml(yield* acceptHeader) ? yield* renderHostedPage(gamePage(game)) : game
        }))
      .handle("instantPlay", ({ path, urlParams }) =>
        withRetryAfter(Effect.zipRight(
          limiter.admitClient(playsPerAddress, [[playsPerCustomer, urlParams.c]]),
          games.hostedPlay(path.gameId, urlParams.c, urlParams.t)
        )))
      .handle("reveal", ({ path, urlParams }) =>
        withRetryAfter(Effect.zipRight(
          limiter.admitClient(playsPerAddress, [[revealsPerPlay, path.playId]]),
          games.hostedReveal(path.playId, urlParams.t)
        )))
      .handle("play", ({ path, urlParams }) =>
        Effect.gen(function*() {
          yield* withRetryAfter(limiter.admitPageView)
          const play = yield* games.hostedPlayView(path.playId, urlParams.t)
          return prefersHtml(yield* acceptHeader) ? yield* renderHostedPage(playPage(play)) : play
        }))
  }))
