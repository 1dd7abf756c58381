/**
 * The typed errors of the service and their one wire shape:
 *
 *   { "error": { "code": "invalid_request", "message": "…", "param": "amount" } }
 *
 * Each error is a `Schema.TaggedError` that services fail with. Its `…Response` schema is what an
 * HttpApi endpoint declares with `.addError(...)`: a transformation between the wire envelope and the
 * error class, annotated with the HTTP status, so the server encodes the envelope, the OpenAPI document
 * shows it, and the typed client decodes it back into the class.
 */
import { HttpApiSchema } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { ParseResult, Schema } from "effect"

export const ErrorCode = Schema.Literal(
  "invalid_request",
  "unauthorized",
  "mfa_required",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "payload_too_large",
  "request_header_fields_too_large",
  "request_timeout",
  "unsupported_media_type",
  "invalid_state",
  "idempotency_conflict",
  "rate_limited",
  "internal_error",
  "service_unavailable"
)
export type ErrorCode = typeof ErrorCode.Type

/** The envelope every error answer has, whatever route it comes from. */
export const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    code: ErrorCode,
    message: Schema.String,
    param: Schema.optional(Schema.String)
  })
}).annotations({ identifier: "ErrorEnvelope" })
export type ErrorEnvelope = typeof ErrorEnvelope.Type

const envelopeOf = <C extends ErrorCode>(code: C) =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String,
      param: Schema.optional(Schema.String)
    })
  })

const errorFields = {
  message: Schema.String,
  param: Schema.optional(Schema.String)
}

/** The status and code each domain error is answered with. */
const wireOf = {
  InvalidRequest: { status: 400, code: "invalid_request" },
  Unauthorized: { status: 401, code: "unauthorized" },
  MfaRequired: { status: 401, code: "mfa_required" },
  Forbidden: { status: 403, code: "forbidden" },
  NotFound: { status: 404, code: "not_found" },
  InvalidState: { status: 409, code: "invalid_state" },
  IdempotencyConflict: { status: 409, code: "idempotency_conflict" },
  RateLimited: { status: 429, code: "rate_limited" },
  MethodNotAllowed: { status: 405, code: "method_not_allowed" },
  PayloadTooLarge: { status: 413, code: "payload_too_large" },
  UnsupportedMediaType: { status: 415, code: "unsupported_media_type" },
  InternalError: { status: 500, code: "internal_error" },
  ServiceUnavailable: { status: 503, code: "service_unavailable" }
} as const satisfies Record<string, { readonly status: number; readonly code: ErrorCode }>

interface ErrorFields {
  readonly message: string
  readonly param?: string | undefined
}

/** Builds the wire schema of one error class: the envelope with its code, at its status. */
const wire = <A extends ErrorFields, Tag extends keyof typeof wireOf>(
  self: Schema.Schema<A, ErrorFields & { readonly _tag: Tag }>,
  tag: Tag,
  description: string
) => {
  const { code, status } = wireOf[tag]
  return Schema.transform(envelopeOf(code), self, {
    strict: false,
    decode: (body) => ({ _tag: tag, message: body.error.message, param: body.error.param }),
    encode: (error) => ({
      error: error.param === undefined
        ? { code, message: error.message }
        : { code, message: error.message, param: error.param }
    })
  }).annotations({
    ...HttpApiSchema.annotations({ status }),
    identifier: `Error_${code}`,
    description
  })
}

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", errorFields) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", errorFields) {}
export class MfaRequired extends Schema.TaggedError<MfaRequired>()("MfaRequired", errorFields) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", errorFields) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", errorFields) {}
export class InvalidState extends Schema.TaggedError<InvalidState>()("InvalidState", errorFields) {}
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", errorFields) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...errorFields,
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

export const InvalidRequestResponse = wire(
  InvalidRequest,
  "InvalidRequest",
  "The request is malformed or a value is missing, of the wrong type or out of range."
)
export const UnauthorizedResponse = wire(
  Unauthorized,
  "Unauthorized",
  "No credential, or an unknown, revoked or expired one."
)
export const MfaRequiredResponse = wire(
  MfaRequired,
  "MfaRequired",
  "A TOTP code is required for this operation."
)
export const ForbiddenResponse = wire(
  Forbidden,
  "Forbidden",
  "Authenticated, but not allowed to do this."
)
export const NotFoundResponse = wire(
  NotFound,
  "NotFound",
  "No such object (objects of other tenants answer the same)."
)
export const InvalidStateResponse = wire(
  InvalidState,
  "InvalidState",
  "The object's lifecycle does not allow this transition."
)
export const IdempotencyConflictResponse = wire(
  IdempotencyConflict,
  "IdempotencyConflict",
  "The Idempotency-Key was used before with a different request."
)
// Retry-After is set as a header by the HTTP layer from `retryAfterSeconds`.
export const RateLimitedResponse = Schema.transform(envelopeOf("rate_limited"), RateLimited, {
  strict: false,
  decode: (body) => ({ _tag: "RateLimited" as const, message: body.error.message, param: body.error.param }),
  encode: (error) => ({ error: { code: "rate_limited" as const, message: error.message } })
}).annotations({
  ...HttpApiSchema.annotations({ status: 429 }),
  identifier: "Error_rate_limited",
  description: "Too many requests; retry after the number of seconds in the Retry-After header."
})

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", errorFields) {}
export const ServiceUnavailableResponse = wire(
  ServiceUnavailable,
  "ServiceUnavailable",
  "A dependency (the database or the cluster) is not usable right now."
)

// The answers below come from the HTTP layer itself (runtime/Http.ts, runtime/RequestGuard.ts), around a route's
// handler; they are declared on the API so that every operation documents them and the typed client
// reads them as errors rather than as undecodable bodies.
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", errorFields) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", errorFields) {}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", errorFields) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", errorFields) {}

export const MethodNotAllowedResponse = wire(
  MethodNotAllowed,
  "MethodNotAllowed",
  "The path exists but not with this method; the `Allow` header lists the methods it takes."
)
export const PayloadTooLargeResponse = wire(
  PayloadTooLarge,
  "PayloadTooLarge",
  "The request body is larger than MAX_BODY_BYTES (1 MiB by default); it was not read."
)
export const UnsupportedMediaTypeResponse = wire(
  UnsupportedMediaType,
  "UnsupportedMediaType",
  "The request has a body that is not `application/json`."
)
export const InternalErrorResponse = wire(
  InternalError,
  "InternalError",
  "The service failed; the cause is logged under the response's `x-request-id` and never shown."
)

/** Every domain error a service can fail with. */
export type ApiError =
  | InvalidRequest
  | Unauthorized
  | MfaRequired
  | Forbidden
  | NotFound
  | InvalidState
  | IdempotencyConflict
  | RateLimited
  | ServiceUnavailable

/** What a value of a schema's type is, in words: the schema's own rendering names internal schemas. */
const typeInWords = (type: string): string => {
  const trimmed = type.trim()
  if (trimmed.startsWith("{") || /^[A-Z][A-Za-z0-9]*$/.test(trimmed)) return "an object"
  if (trimmed.startsWith("ReadonlyArray<") || trimmed.startsWith("readonly [")) return "an array"
  if (trimmed === "number" || trimmed.startsWith("int") || trimmed.startsWith("a number")) return "a number"
  if (trimmed === "boolean") return "true or false"
  if (trimmed === "null") return "null"
  if (trimmed.includes("string")) return "a string"
  return "of another type"
}

/**
 * A schema's message as a client should read it. Messages the schemas word themselves pass through;
 * the library's generic ones ("Expected { readonly name: …}, actual 5", "is unexpected, expected: …")
 * are put in plain words that name what is allowed and no internal schema.
 */
export const plainIssueMessage = (message: string): string => {
  const unexpected = /^is unexpected, expected: (.*)$/s.exec(message)
  if (unexpected) {
    const fields = unexpected[1]!.split(" | ").map((field) => field.replace(/^"|"$/g, ""))
    return `is not a field of this request (the fields are ${fields.join(", ")})`
  }
  const expected = /^Expected (.*), actual .*$/s.exec(message)
  if (!expected) return message
  const type = expected[1]!
  // A union at the top level, such as `string | null`: its members in words, without repeats.
  const members = type.includes("{") || type.includes("<") ? [type] : type.split(" | ")
  const words = [...new Set(members.map(typeInWords))]
  return `must be ${words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`}`
}

/** Renders a schema decode failure as one readable sentence and the offending parameter. */
export const describeIssues = (
  issues: ReadonlyArray<{ readonly path: ReadonlyArray<unknown>; readonly message: string }>,
  fallback: string
): { readonly message: string; readonly param: string | undefined } => {
  const first = issues[0]
  if (first === undefined) return { message: fallback, param: undefined }
  const param = first.path.length > 0 ? first.path.map((key) => typeof key === "object" && key !== null && "key" in key ? String(key.key) : String(key)).join(".") : undefined
  const plain = plainIssueMessage(first.message)
  const message = param === undefined ? plain : `${param}: ${plain}`
  return { message, param }
}

/**
 * The framework's own decode failure (a body, path, query or header that does not match its schema),
 * rendered in the shared envelope. Encode-only: the typed client reads such an answer as InvalidRequest.
 */
export const DecodeErrorResponse = Schema.transformOrFail(envelopeOf("invalid_request"), HttpApiDecodeError, {
  strict: false,
  decode: (_body, _options, ast) =>
    ParseResult.fail(new ParseResult.Forbidden(ast, _body, "read as InvalidRequest")),
  encode: (error) => {
    const { message, param } = describeIssues(error.issues, error.message)
    return ParseResult.succeed({
      error: param === undefined
        ? { code: "invalid_request" as const, message }
        : { code: "invalid_request" as const, message, param }
    })
  }
}).annotations({
  ...HttpApiSchema.annotations({ status: 400 }),
  identifier: "Error_invalid_request_schema",
  description: "The request did not match the operation's schema."
})


export const errorStatus = (error: ApiError): number => wireOf[error._tag].status

const errorClasses = {
  InvalidRequest,
  Unauthorized,
  MfaRequired,
  Forbidden,
  NotFound,
  InvalidState,
  IdempotencyConflict,
  RateLimited,
  ServiceUnavailable
} as const satisfies Record<ApiError["_tag"], new(fields: ErrorFields) => ApiError>

/**
 * The error an envelope stands for: the reverse of `toErrorEnvelope`, for stored answers replayed to a
 * caller that wants the error rather than the response. None for codes no domain error has.
 */
export const fromErrorEnvelope = (envelope: ErrorEnvelope): ApiError | undefined => {
  const tag = (Object.keys(errorClasses) as Array<keyof typeof errorClasses>).find((tag) => wireOf[tag].code === envelope.error.code)
  if (tag === undefined) return undefined
  const { message, param } = envelope.error
  return new errorClasses[tag](param === undefined ? { message } : { message, param })
}

/** The envelope an error is answered with, for answers that are stored and replayed. */
export const toErrorEnvelope = (error: ApiError): ErrorEnvelope => ({
  error: error.param === undefined
    ? { code: wireOf[error._tag].code, message: error.message }
    : { code: wireOf[error._tag].code, message: error.message, param: error.param }
})
