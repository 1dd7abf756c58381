/**
 * The names the mail queue shares with its migration: the consumer of payment events that sends
 * receipts, the events it subscribes to, and the channel on which a newly queued mail is announced.
 */

/** The outbox consumer that turns paid payments and refunds into customer receipts. */
export const RECEIPTS_CONSUMER = "mail_receipts"
export const RECEIPT_EVENT_TYPES = ["payment.completed", "payment.refunded"] as const

/** The LISTEN/NOTIFY channel on which the statement that queues a mail wakes the sender. */
export const MAIL_QUEUE_CHANNEL = "outgoing_mail"
