/**
 * The quickstart: the first page of the API reference (the OpenAPI document's description, which /docs
 * shows as its introduction) and the top of the README, word for word (test/system/Quickstart.test.ts
 * compares the two and runs its commands against a started service).
 */
export const QUICKSTART_MARKDOWN = `## Quickstart

From a clone to a verified webhook in a few minutes: register, create a store, an API key and a webhook
endpoint, take a test payment, watch the signed webhook arrive and verify it, then refund. You need Node 20+,
\`curl\` and \`jq\`.

Start the service, allowing webhooks to your own machine (\`WEBHOOK_ALLOW_PRIVATE_NETWORKS\`; leave it unset in
production, where webhook URLs must be public \`https://\` addresses):

\`\`\`bash
npm install && WEBHOOK_ALLOW_PRIVATE_NETWORKS=true npm start
\`\`\`

In a second terminal, in the checkout (the receiver below uses its \`standardwebhooks\`; elsewhere,
\`npm install standardwebhooks\` first):

\`\`\`bash
KHQR=\${KHQR:-http://localhost:3000}           # where the service answers
RECEIVER_PORT=\${RECEIVER_PORT:-4242}          # where your webhook receiver listens
json=(-sS --fail-with-body -H 'content-type: application/json')

# 1. Register: a user, their organization, and a session token for the console routes
TOKEN=$(curl "\${json[@]}" "$KHQR/auth/register" \\
  -d '{"email":"owner@example.com","password":"correct horse battery staple","organization_name":"Riverside Coffee"}' \\
  | jq -r .access_token)

# 2. A store
STORE=$(curl "\${json[@]}" "$KHQR/stores" -H "authorization: Bearer $TOKEN" \\
  -d '{"name":"Riverside Coffee"}' | jq -r .id)

# 3. A test-mode API key of the store, for your backend (its secret is shown only now)
KEY=$(curl "\${json[@]}" "$KHQR/api-keys" -H "authorization: Bearer $TOKEN" \\
  -d "{\\"store_id\\":\\"$STORE\\",\\"mode\\":\\"test\\"}" | jq -r .secret)

# 4. A webhook endpoint on your machine, and its signing secret (whsec_…)
WEBHOOK_SECRET=$(curl "\${json[@]}" "$KHQR/webhook-endpoints" -H "authorization: Bearer $TOKEN" \\
  -d "{\\"store_id\\":\\"$STORE\\",\\"url\\":\\"http://localhost:$RECEIVER_PORT/webhooks\\",\\"events\\":[\\"payment.completed\\",\\"payment.refunded\\"]}" \\
  | jq -r .secret)
\`\`\`

A receiver that accepts only deliveries signed with that secret (Standard Webhooks):

\`\`\`bash
cat > receiver.mjs <<'EOF'
import { createServer } from "node:http"
import { Webhook } from "standardwebhooks"

const webhook = new Webhook(process.env.WEBHOOK_SECRET)
createServer(async (request, response) => {
  let body = ""
  for await (const chunk of request) body += chunk
  try {
    const event = webhook.verify(body, request.headers)
    console.log(\`verified \${event.type} \${event.data.object.id} \${event.data.object.status}\`)
    response.writeHead(204).end()
  } catch (error) {
    console.log(\`rejected a delivery: \${error.message}\`)
    response.writeHead(400).end()
  }
}).listen(Number(process.env.RECEIVER_PORT))
EOF
WEBHOOK_SECRET=$WEBHOOK_SECRET RECEIVER_PORT=$RECEIVER_PORT node receiver.mjs &
\`\`\`

Take a payment, pay it, refund part of it:

\`\`\`bash
# 5. A payment, with an Idempotency-Key: a retry with the same key answers the same payment
PAYMENT=$(curl "\${json[@]}" "$KHQR/v1/payments" -H "authorization: Bearer $KEY" \\
  -H 'idempotency-key: order-1042' \\
  -d '{"amount":"12.50","currency":"USD","reference_id":"order-1042"}' | jq -r .id)
echo "checkout page: $KHQR/checkout/$PAYMENT"

# 6. Test mode: act as the customer, who scans the QR code, then pays;
#    the receiver prints "verified payment.completed pay_… paid"
for status in scanned paid; do
  curl "\${json[@]}" "$KHQR/v1/payments/$PAYMENT/simulate" -H "authorization: Bearer $KEY" \\
    -d "{\\"status\\":\\"$status\\"}" | jq -c '{id, status}'
done

# 7. Refund 5.00 of it; the receiver prints "verified payment.refunded pay_… partially_refunded"
curl "\${json[@]}" "$KHQR/v1/payments/$PAYMENT/refund" -H "authorization: Bearer $KEY" \\
  -H 'idempotency-key: refund-order-1042' -d '{"amount":"5.00"}' | jq -c '{id, status, amount}'
\`\`\`

The same with the typed client (TypeScript, Effect): the package exports it as
\`khqr-merchant-platform/client\` (\`npm install effect @effect/platform <path to this checkout>\`; run with
\`npx tsx quickstart.ts\`):

\`\`\`ts
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { makeApiClient } from "khqr-merchant-platform/client"

const KHQR = process.env.KHQR ?? "http://localhost:3000"
const RECEIVER_PORT = process.env.RECEIVER_PORT ?? "4242"

const quickstart = Effect.gen(function*() {
  const visitor = yield* makeApiClient(KHQR)
  const { access_token } = yield* visitor.auth.register({
    payload: { email: "developer@example.com", password: "correct horse battery staple" }
  })
  const owner = yield* makeApiClient(KHQR, { credential: access_token })
  const store = yield* owner.stores.create({ payload: { name: "Riverside Coffee" } })
  const key = yield* owner.apiKeys.create({ payload: { store_id: store.id, mode: "test" } })
  const endpoint = yield* owner.webhooks.create({
    payload: { store_id: store.id, url: \`http://localhost:\${RECEIVER_PORT}/webhooks\`, events: ["payment.completed"] }
  })

  const merchant = yield* makeApiClient(KHQR, { credential: key.secret })
  const payment = yield* merchant.payments.create({
    payload: { amount: "12.50", currency: "USD", reference_id: "order-1043" },
    headers: { "idempotency-key": "order-1043" }
  })
  yield* merchant.payments.simulate({ path: { id: payment.id }, payload: { status: "scanned" } })
  const paid = yield* merchant.payments.simulate({ path: { id: payment.id }, payload: { status: "paid" } })
  const refund = yield* merchant.payments.refund({
    path: { id: payment.id },
    payload: { amount: "5.00" },
    headers: { "idempotency-key": "refund-order-1043" }
  })
  console.log(\`\${paid.id} \${paid.status}; refund \${refund.id} \${refund.status}; webhooks signed with \${endpoint.secret.slice(0, 6)}…\`)
})

Effect.runPromise(quickstart.pipe(Effect.provide(FetchHttpClient.layer)))
\`\`\`

Next: the API reference at \`/docs\` (this quickstart is its first page; the document itself is \`/openapi.json\`),
the merchant console at \`/console\`, and the rest of this README for how the service works.
`
