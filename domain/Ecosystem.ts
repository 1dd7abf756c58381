/**
 * The public catalog of the platform's products and shared services: what a merchant (or a partner
 * building on the platform) can use, and where each one starts.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, ListParams } from "./Lists.ts"

export const EcosystemCategory = Schema.Literal(
  "payments",
  "engagement",
  "insights",
  "operations",
  "integrations",
  "platform"
)
export type EcosystemCategory = typeof EcosystemCategory.Type

export const EcosystemProductStatus = Schema.Literal("available", "coming_soon").annotations({
  description: "`available`: its starting path is served now. `coming_soon`: announced, not served yet " +
    "(its `url_path` answers 404 until it is)."
})
export type EcosystemProductStatus = typeof EcosystemProductStatus.Type

export class EcosystemProduct extends Schema.Class<EcosystemProduct>("EcosystemProduct")({
  id: Schema.String.annotations({ description: "A stable id of the product", examples: ["eco_payments_api"] }),
  object: Schema.Literal("ecosystem_product"),
  name: Schema.String,
  category: EcosystemCategory,
  description: Schema.String,
  url_path: Schema.String.annotations({
    description: "Where the product starts, relative to the service's base address; `{…}` marks a path parameter",
    examples: ["/v1/payments", "/checkout/{id}"]
  }),
  status: EcosystemProductStatus
}) {}

export class EcosystemProductList
  extends Schema.Class<EcosystemProductList>("EcosystemProductList")(ListOf(EcosystemProduct).fields)
{}

export class EcosystemGroup extends HttpApiGroup.make("ecosystem")
  .add(
    HttpApiEndpoint.get("products", "/ecosystem/products")
      .setUrlParams(ListParams)
      .addSuccess(EcosystemProductList)
      .annotate(OpenApi.Summary, "Catalog of the platform's products and shared services")
      .annotate(
        OpenApi.Description,
        "A fixed catalog in a fixed order (not newest first: it is not a record of anything created). " +
          "Takes `limit` and `cursor` like every list. No credential."
      )
  )
  .annotate(OpenApi.Title, "Ecosystem")
  .annotate(OpenApi.Description, "The products of the platform, with where their documentation lives.")
{}
