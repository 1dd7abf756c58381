/**
 * AI: marketing copy for a channel, the assistant as a chat about the store's own data (each answer with
 * the figures it was made from), and this month's usage and cost against the store's monthly cap.
 */
import { useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useId, useState } from "react"
import { type AiResult, ChannelLimits, type Language } from "../../../../../domain/Ai.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { PermittedButton } from "../../ui/Permitted.tsx"
import { Button, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { SelectField } from "../../ui/Fields.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { useWorkspace } from "../../workspace.tsx"

type Tone = "friendly" | "formal" | "playful"
type Channel = keyof typeof ChannelLimits
const LANGUAGES: ReadonlyArray<{ readonly value: Language; readonly label: string }> = [
  { value: "en", label: "English" },
  { value: "km", label: "Khmer" }
]

const usd = (value: number) =>
  new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: value < 1 ? 4 : 2 }).format(value)

export const AiPage = () => (
  <div className="page">
    <div className="page-header">
      <div>
        <h1>AI assistant</h1>
        <p className="muted">Every figure comes from your store's own data; the model only words it.</p>
      </div>
    </div>
    <UsageCard />
    <div className="two-columns">
      <AssistantChat />
      <MarketingCopyCard />
    </div>
  </div>
)

const UsageCard = () => {
  const { store } = useWorkspace()
  const usage = useConsoleQuery(["ai-usage", store!.id], (client) => client.AiUsage({ store_id: store!.id }))
  const data = usage.data
  const cap = data?.monthly_cost_cap_usd ?? null
  const share = cap === null || cap === 0 || data === undefined ? null : Math.min(1, data.month_cost_usd / cap)
  return (
    <section className="card" aria-labelledby="usage-title">
      <div className="card-header"><h2 id="usage-title">Usage this month</h2></div>
      <ErrorNotice error={usage.error} />
      {usage.isPending ? <Loading /> : data === undefined ? null : (
        <>
          <p className="usage-line">
            <strong>{usd(data.month_cost_usd)}</strong> spent this month {cap === null ? "(no monthly cap set)" : <>of the <strong>{usd(cap)}</strong> monthly cap</>}
          </p>
          {share === null ? null : (
            <>
              <progress className="usage-meter" max={1} value={share} aria-label="Share of the monthly cap used">{Math.round(share * 100)} %</progress>
              {share >= 1
                ? <div className="alert alert-error" role="alert">The cap is reached: AI calls are refused until next month.</div>
                : share >= 0.8 ? <div className="alert alert-warning" role="note">Over 80 % of the monthly cap is used.</div> : null}
            </>
          )}
          <p className="muted small">Last {data.window_days} days: {data.calls} calls, {data.input_tokens + data.output_tokens} tokens, {usd(data.cost_usd)}{data.failed_calls > 0 ? `, ${data.failed_calls} answered by the built-in model after the configured one failed` : ""}.</p>
        </>
      )}
    </section>
  )
}

interface Exchange {
  readonly question: string
  readonly answer: AiResult | undefined
  readonly error: string | undefined
}

/** A figure the answer used, written plainly: a group of figures (amounts per currency, a range) as its parts. */
/** A time in the figures, as the rest of the console writes times (not the wire's ISO 8601). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/

const figure = (value: unknown): string =>
  value === null || value === undefined
    ? "—"
    : Array.isArray(value)
    ? value.map(figure).join(", ")
    : typeof value === "object"
    ? Object.entries(value as Record<string, unknown>).map(([key, part]) => `${key.replaceAll("_", " ")} ${figure(part)}`).join(" · ")
    : typeof value === "string" && ISO_TIME.test(value)
    ? formatTime(value)
    : String(value)

const AssistantChat = () => {
  const { livemode, store } = useWorkspace()
  const queryClient = useQueryClient()
  const [question, setQuestion] = useState("")
  const [exchanges, setExchanges] = useState<ReadonlyArray<Exchange>>([])
  const ask = useConsoleMutation((client, asked: string) => client.AskAssistant({ store_id: store!.id, question: asked, livemode }), {
    onSuccess: (answer, asked) => {
      setExchanges((previous) => previous.map((exchange) => (exchange.question === asked && exchange.answer === undefined ? { ...exchange, answer } : exchange)))
      void queryClient.invalidateQueries({ queryKey: ["ai-usage"] })
    }
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const asked = question.trim()
    if (asked === "") return
    setExchanges([...exchanges, { question: asked, answer: undefined, error: undefined }])
    setQuestion("")
    ask.mutate(asked, {
      onError: (failure) =>
        setExchanges((previous) => previous.map((exchange) => (exchange.question === asked && exchange.answer === undefined ? { ...exchange, error: failure.message } : exchange)))
    })
  }
  return (
    <section className="card" aria-labelledby="assistant-title">
      <h2 id="assistant-title">Ask about your store</h2>
      <ol className="chat" aria-live="polite">
        {exchanges.length === 0 ? <li className="muted small">Try “What was my revenue in the last 7 days?” or “How many open risk cases do I have?”</li> : null}
        {exchanges.map((exchange, index) => (
          <li key={index} className="chat-exchange">
            <p className="chat-question"><span className="visually-hidden">You asked: </span>{exchange.question}</p>
            {exchange.error !== undefined
              ? <p className="alert alert-error" role="alert">{exchange.error}</p>
              : exchange.answer === undefined
              ? <p className="loading" role="status">Thinking…</p>
              : (
                <div className="chat-answer">
                  <p><span className="visually-hidden">Answer: </span>{exchange.answer.text}</p>
                  <details>
                    <summary>Figures used</summary>
                    <dl className="details">
                      {Object.entries((exchange.answer.data ?? {}) as Record<string, unknown>).map(([key, value]) => (
                        <div key={key} className="details-row"><dt>{key.replaceAll("_", " ")}</dt><dd>{figure(value)}</dd></div>
                      ))}
                    </dl>
                  </details>
                </div>
              )}
          </li>
        ))}
      </ol>
      <form onSubmit={submit} className="chat-form" noValidate>
        <Field label="Your question" name="question" value={question} onChange={setQuestion} placeholder="What was my revenue in the last 7 days?" />
        <div><Button kind="primary" type="submit" busy={ask.isPending}>Ask</Button></div>
      </form>
    </section>
  )
}

const MarketingCopyCard = () => {
  const { livemode, store } = useWorkspace()
  const queryClient = useQueryClient()
  const [form, setForm] = useState({ product: "", audience: "", tone: "friendly" as Tone, language: "en" as Language, channel: "sms" as Channel })
  const [copied, setCopied] = useState(false)
  const outputId = useId()
  const write = useConsoleMutation((client, _: void) =>
    client.MarketingCopy({
      store_id: store!.id,
      livemode,
      tone: form.tone,
      language: form.language,
      channel: form.channel,
      ...(form.product.trim() === "" ? {} : { product: form.product.trim() }),
      ...(form.audience.trim() === "" ? {} : { audience: form.audience.trim() })
    }), {
    onSuccess: () => {
      setCopied(false)
      void queryClient.invalidateQueries({ queryKey: ["ai-usage"] })
    }
  })
  return (
    <section className="card" aria-labelledby="copy-title">
      <h2 id="copy-title">Marketing copy</h2>
      <form onSubmit={(event) => {
        event.preventDefault()
        write.mutate()
      }} noValidate>
        <FormError error={write.error} fields={["product", "audience", "tone", "language", "channel"]} />
        <Field label="Product" name="product" value={form.product} onChange={(product) => setForm({ ...form, product })} placeholder="Iced latte" error={write.error} />
        <Field label="Audience" name="audience" value={form.audience} onChange={(audience) => setForm({ ...form, audience })} placeholder="Students near the campus" error={write.error} />
        <div className="field-row three">
          <SelectField
            label="Tone"
            name="tone"
            value={form.tone}
            options={[{ value: "friendly", label: "Friendly" }, { value: "formal", label: "Formal" }, { value: "playful", label: "Playful" }]}
            onChange={(tone) => setForm({ ...form, tone })}
            error={write.error}
          />
          <SelectField label="Language" name="language" value={form.language} options={LANGUAGES} onChange={(language) => setForm({ ...form, language })} error={write.error} />
          <SelectField
            label="Channel"
            name="channel"
            value={form.channel}
            options={[{ value: "sms", label: "SMS" }, { value: "telegram", label: "Telegram" }, { value: "email", label: "E-mail" }]}
            onChange={(channel) => setForm({ ...form, channel })}
            error={write.error}
          />
        </div>
        <div><PermittedButton permission="marketing.manage" kind="primary" type="submit" busy={write.isPending}>Write copy</PermittedButton></div>
      </form>
      {write.data === undefined ? null : (
        <div className="copy-output">
          <label htmlFor={outputId} className="field-label">Copy for {form.channel === "sms" ? "SMS" : form.channel === "email" ? "e-mail" : "Telegram"}</label>
          <textarea id={outputId} readOnly rows={4} value={write.data.text} />
          <p className="muted small">{write.data.text.length} of {ChannelLimits[form.channel]} characters · written by {write.data.model}</p>
          <div>
            <Button onClick={() => void navigator.clipboard.writeText(write.data!.text).then(() => setCopied(true), () => setCopied(false))}>{copied ? "Copied" : "Copy"}</Button>
          </div>
        </div>
      )}
    </section>
  )
}
