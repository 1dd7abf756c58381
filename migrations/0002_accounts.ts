/**
 * Identity and tenancy: users and their sessions, organizations and memberships with roles, stores,
 * branches, merchant verification, API keys, platform settings, password resets, outgoing mail, and
 * the login throttle. Timestamps are `timestamptz(3)`: list cursors carry millisecond positions.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      id                  text PRIMARY KEY,
      email               text NOT NULL,
      name                text,
      password_hash       text NOT NULL,
      mfa_enabled         boolean NOT NULL DEFAULT false,
      mfa_secret          text,
      mfa_pending_secret  text,
      mfa_last_time_step  bigint,
      created_at          timestamptz(3) NOT NULL DEFAULT now(),
      updated_at          timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX users_email ON users (lower(email))`
  yield* sql`
    CREATE TABLE sessions (
      id            text PRIMARY KEY,
      user_id       text NOT NULL REFERENCES users (id),
      token_hash    text NOT NULL UNIQUE,
      created_at    timestamptz(3) NOT NULL DEFAULT now(),
      expires_at    timestamptz(3) NOT NULL,
      revoked_at    timestamptz(3),
      last_used_at  timestamptz(3)
    )`
  yield* sql`CREATE INDEX sessions_user ON sessions (user_id)`
  yield* sql`
    CREATE TABLE organizations (
      id          text PRIMARY KEY,
      name        text NOT NULL,
      created_at  timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE memberships (
      organization_id  text NOT NULL REFERENCES organizations (id),
      user_id          text NOT NULL REFERENCES users (id),
      role             text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'analyst')),
      created_at       timestamptz(3) NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, user_id)
    )`
  yield* sql`CREATE INDEX memberships_user ON memberships (user_id)`
  yield* sql`
    CREATE TABLE password_resets (
      token_hash  text PRIMARY KEY,
      user_id     text NOT NULL REFERENCES users (id),
      created_at  timestamptz(3) NOT NULL DEFAULT now(),
      expires_at  timestamptz(3) NOT NULL,
      used_at     timestamptz(3)
    )`
  yield* sql`
    CREATE TABLE outgoing_mail (
      id          bigserial PRIMARY KEY,
      recipient   text NOT NULL,
      subject     text NOT NULL,
      body        text NOT NULL,
      created_at  timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE auth_throttle (
      key              text PRIMARY KEY,
      failures         integer NOT NULL,
      window_started   timestamptz(3) NOT NULL,
      blocked_until    timestamptz(3)
    )`
  yield* sql`
    CREATE TABLE stores (
      id                   text PRIMARY KEY,
      organization_id      text NOT NULL REFERENCES organizations (id),
      name                 text NOT NULL,
      branding             jsonb NOT NULL DEFAULT '{}'::jsonb,
      credentials          text,
      credentials_summary  jsonb,
      live_mode            boolean NOT NULL DEFAULT false,
      created_at           timestamptz(3) NOT NULL DEFAULT now(),
      updated_at           timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX stores_organization ON stores (organization_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE branches (
      id          text PRIMARY KEY,
      store_id    text NOT NULL REFERENCES stores (id),
      name        text NOT NULL,
      address     text,
      phone       text,
      active      boolean NOT NULL DEFAULT true,
      created_at  timestamptz(3) NOT NULL DEFAULT now(),
      updated_at  timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX branches_store ON branches (store_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE verifications (
      id                   text PRIMARY KEY,
      organization_id      text NOT NULL REFERENCES organizations (id),
      status               text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
      business_name        text NOT NULL,
      registration_number  text NOT NULL,
      contact              jsonb NOT NULL,
      documents            jsonb NOT NULL,
      submitted_by         text NOT NULL REFERENCES users (id),
      reviewed_by          text REFERENCES users (id),
      review_note          text,
      created_at           timestamptz(3) NOT NULL DEFAULT now(),
      reviewed_at          timestamptz(3)
    )`
  yield* sql`CREATE INDEX verifications_organization ON verifications (organization_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE api_keys (
      id            text PRIMARY KEY,
      store_id      text NOT NULL REFERENCES stores (id),
      mode          text NOT NULL CHECK (mode IN ('test', 'live')),
      name          text,
      secret_hash   text NOT NULL UNIQUE,
      last4         text NOT NULL,
      created_at    timestamptz(3) NOT NULL DEFAULT now(),
      last_used_at  timestamptz(3),
      revoked_at    timestamptz(3),
      replaced_by   text
    )`
  yield* sql`CREATE INDEX api_keys_store ON api_keys (store_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE platform_settings (
      key         text PRIMARY KEY,
      value       text NOT NULL,
      updated_by  text REFERENCES users (id),
      updated_at  timestamptz(3) NOT NULL DEFAULT now()
    )`
})
