/**
 * Ledger tables for ticket handoffs and recorded clicks (versions 20–29).
 *
 * - `handoff_attempts`: one row per counted creation attempt, for the sliding 60-second window of
 *   the handoff limit (docs/api.md: 10 a minute per account, counted after authentication and
 *   before validation). Rows older than the window are pruned as the account makes new attempts.
 * - `handoffs`: what POST /v1/ticket-handoffs issued. The seller URL is fixed at creation, so the
 *   confirmation page shows exactly where Continue leads. `redeemed_ms` moves from NULL to the
 *   instant of the first Continue by one conditional UPDATE (docs/api.md, Ticket handoffs: exactly one redirect).
 * - `handoff_clicks`: the affiliate click, written in the same transaction as the redemption. Its
 *   primary key is the handoff id, a second guard against a duplicate click.
 *
 * The ledger runs with synchronous=FULL (db/ledger.ts), so a committed redemption survives a crash.
 */
import type { Migration } from "./migrate.ts";

export const HANDOFF_MIGRATIONS: Migration[] = [
  {
    version: 20,
    sql: `
CREATE TABLE handoff_attempts (
  account_id INTEGER NOT NULL,
  at_ms INTEGER NOT NULL
);
CREATE INDEX handoff_attempts_account ON handoff_attempts(account_id, at_ms);

CREATE TABLE handoffs (
  id TEXT PRIMARY KEY,                -- 'ho_' + 22 random base62 characters
  account_id INTEGER NOT NULL,
  key_id INTEGER NOT NULL,            -- attribution: the key that created it
  event_id INTEGER NOT NULL,
  seller TEXT NOT NULL,               -- a HANDOFF_SELLERS name
  seller_url TEXT NOT NULL,           -- where Continue sends the user (303)
  created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  redeemed_ms INTEGER                 -- NULL until the first Continue
) WITHOUT ROWID;
CREATE INDEX handoffs_account ON handoffs(account_id, created_ms);

CREATE TABLE handoff_clicks (
  handoff_id TEXT PRIMARY KEY REFERENCES handoffs(id),
  account_id INTEGER NOT NULL,
  key_id INTEGER NOT NULL,
  event_id INTEGER NOT NULL,
  seller TEXT NOT NULL,
  seller_url TEXT NOT NULL,
  clicked_ms INTEGER NOT NULL
) WITHOUT ROWID;
`,
  },
];
