/**
 * Notifications: where the store hears about its payments — Telegram and the other messaging channels —
 * each with its destination, the events it gets, on/off and a test message, and the log of every message
 * sent with its outcome.
 */
import { useQueryClient } from "@tanstack/react-query"
import type { Effect } from "effect"
import { useEffect, useState } from "react"
import { NotificationEvents } from "../../../../../domain/Notifications.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { Button, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { ErrorNotice } from "../../ui/Forms.tsx"
import { Pager, useCursorTrail } from "../../ui/Paging.tsx"
import { useWorkspace } from "../../workspace.tsx"

type Channel = "telegram" | "whatsapp" | "sms" | "signal"
const CHANNEL_LABELS: Record<Channel, string> = { telegram: "Telegram", whatsapp: "WhatsApp", sms: "SMS", signal: "Signal" }
const EVENT_LABELS: Record<(typeof NotificationEvents)[number], string> = {
  "payment.completed": "Payment received",
  "payment.refunded": "Payment refunded",
  "loyalty.redemption.created": "Reward redeemed",
  "risk.case_opened": "Risk case opened"
}

interface ChannelState {
  readonly channel: Channel
  readonly destination: string | null
  readonly events: ReadonlyArray<string>
  readonly enabled: boolean
}

export const NotificationsPage = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const telegram = useConsoleQuery(["telegram", storeId], (client) => client.TelegramConfig({ store_id: storeId }))
  const channels = useConsoleQuery(["channels", storeId], (client) => client.ListChannels({ store_id: storeId }))
  const states: ReadonlyArray<ChannelState> = [
    ...(telegram.data === undefined ? [] : [{ channel: "telegram" as const, destination: telegram.data.chat_id, events: telegram.data.events, enabled: telegram.data.enabled }]),
    ...(channels.data?.data ?? [])
  ]
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Notifications</h1>
          <p className="muted">Messages to you or your staff when payments arrive, refunds go out, rewards are redeemed or a risk case opens.</p>
        </div>
      </div>
      <PermissionNote permission="integration.manage" />
      <ErrorNotice error={telegram.error ?? channels.error} />
      {telegram.isPending || channels.isPending ? <Loading /> : (
        <div className="channel-grid">
          {states.map((state) => <ChannelCard key={state.channel} state={state} />)}
        </div>
      )}
      <DeliveryLog />
    </div>
  )
}

const ChannelCard = ({ state }: { readonly state: ChannelState }) => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const queryClient = useQueryClient()
  const [destination, setDestination] = useState(state.destination ?? "")
  const [events, setEvents] = useState<ReadonlyArray<string>>(state.events)
  const [enabled, setEnabled] = useState(state.enabled)
  const [saved, setSaved] = useState(false)
  useEffect(() => {
    setDestination(state.destination ?? "")
    setEvents(state.events)
    setEnabled(state.enabled)
  }, [state])
  const param = state.channel === "telegram" ? "chat_id" : "destination"
  const changes = {
    ...(destination.trim() === "" ? {} : { [param]: destination.trim() }),
    events: events as never,
    enabled
  }
  const save = useConsoleMutation((client, _: void): Effect.Effect<unknown, unknown> =>
    state.channel === "telegram"
      ? client.UpdateTelegram({ store_id: storeId, ...changes })
      : client.UpdateChannel({ store_id: storeId, channel: state.channel, ...changes }), {
    onSuccess: () => {
      setSaved(true)
      void queryClient.invalidateQueries({ queryKey: [state.channel === "telegram" ? "telegram" : "channels", storeId] })
    }
  })
  const test = useConsoleMutation((client, _: void) => client.TestChannel({ store_id: storeId, channel: state.channel }), {
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["notification-log", storeId] })
  })
  const label = CHANNEL_LABELS[state.channel]
  return (
    <section className="card" aria-labelledby={`channel-${state.channel}`}>
      <div className="card-header">
        <h2 id={`channel-${state.channel}`}>{label}</h2>
        {state.enabled ? <span className="badge badge-paid">On</span> : <span className="badge badge-expired">Off</span>}
      </div>
      <form onSubmit={(event) => {
        event.preventDefault()
        setSaved(false)
        save.mutate()
      }} noValidate>
        <FormError error={save.error} fields={[param, "events"]} />
        <Field
          label={state.channel === "telegram" ? "Chat ID" : "Phone number"}
          name={param}
          value={destination}
          onChange={setDestination}
          placeholder={state.channel === "telegram" ? "-1001234567890" : "+85512345678"}
          error={save.error}
          hint={state.channel === "telegram" ? "Add the bot to your group, then use the group's chat id." : undefined}
        />
        <fieldset className="events">
          <legend>Send a message when</legend>
          {NotificationEvents.map((type) => (
            <label key={type} className="check">
              <input
                type="checkbox"
                checked={events.includes(type)}
                onChange={(event) => setEvents(event.target.checked ? [...events, type] : events.filter((chosen) => chosen !== type))}
              />
              {EVENT_LABELS[type]}
            </label>
          ))}
        </fieldset>
        <label className="check"><input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} /> Send {label} messages</label>
        <div className="actions">
          <PermittedButton permission="integration.manage" kind="primary" type="submit" busy={save.isPending}>Save<span className="visually-hidden"> {label}</span></PermittedButton>
          <PermittedButton permission="integration.manage" onClick={() => test.mutate()} busy={test.isPending} disabled={state.destination === null}>
            Send test message<span className="visually-hidden"> on {label}</span>
          </PermittedButton>
        </div>
        {saved && !save.isPending ? <p className="muted small" role="status">Saved.</p> : null}
      </form>
      <ErrorNotice error={test.error} />
      {test.data === undefined ? null : test.data.status === "sent"
        ? <div className="alert alert-success" role="status">Test message sent to {test.data.destination}.</div>
        : test.data.status === "failed"
        ? <div className="alert alert-error" role="status">Not sent{test.data.last_error === null ? "" : `: ${test.data.last_error}`}. Check the {state.channel === "telegram" ? "chat id" : "phone number"} and save again.</div>
        : (
          <div className="alert alert-warning" role="status">
            Not sent yet{test.data.last_error === null ? "" : `: ${test.data.last_error}`}. {test.data.next_attempt_at === null ? "" : `Next try ${formatTime(test.data.next_attempt_at)}.`}
          </div>
        )}
    </section>
  )
}

const STATUS_BADGES: Record<string, string> = { sent: "paid", pending: "pending", failed: "failed" }
const STATUS_LABELS: Record<string, string> = { sent: "Sent", pending: "Retrying", failed: "Failed" }

const DeliveryLog = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const trail = useCursorTrail([storeId])
  const log = useConsoleQuery(["notification-log", storeId, trail.cursor], (client) => client.NotificationLog({ store_id: storeId, cursor: trail.cursor }))
  return (
    <section className="card table-card" aria-labelledby="log-title">
      <div className="card-header">
        <h2 id="log-title">Delivery log</h2>
        <Button onClick={() => void log.refetch()} busy={log.isFetching}>Refresh</Button>
      </div>
      <ErrorNotice error={log.error} />
      {log.isPending ? <Loading /> : (log.data?.data.length ?? 0) === 0
        ? <Empty title="No messages sent yet"><p>Send a test message to check a channel.</p></Empty>
        : (
          <table className="table">
            <caption className="visually-hidden">Messages sent, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Message</th>
                <th scope="col" className="hide-narrow">Channel</th>
                <th scope="col">Outcome</th>
                <th scope="col" className="hide-narrow">Time</th>
              </tr>
            </thead>
            <tbody>
              {log.data!.data.map((message) => (
                <tr key={message.id}>
                  <td>
                    <span className="mono small">{message.event_type}</span>
                    <p className="muted small log-text">{message.text}</p>
                    {/* On a phone the channel column is gone: said here instead. */}
                    <p className="muted small show-narrow">{CHANNEL_LABELS[message.channel as Channel] ?? message.channel} · {message.destination}</p>
                  </td>
                  <td className="hide-narrow">{CHANNEL_LABELS[message.channel as Channel] ?? message.channel}<span className="muted small"> · {message.destination}</span></td>
                  <td>
                    <span className={`badge badge-${STATUS_BADGES[message.status] ?? "pending"}`} data-status={message.status}>{message.status === "pending" && message.attempts === 0 ? "Sending" : STATUS_LABELS[message.status] ?? message.status}</span>
                    <span className="muted small"> {message.attempts} {message.attempts === 1 ? "attempt" : "attempts"}{message.last_status_code === null ? "" : ` · ${message.last_status_code}`}</span>
                    {message.last_error === null ? null : <p className="muted small log-error">{message.last_error}</p>}
                  </td>
                  <td className="hide-narrow nowrap">{formatTime(message.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      <Pager trail={trail} page={log.data} label="Delivery log pages" />
    </section>
  )
}
