/**
 * Ledger tables of the developer portal (versions 30–39), where account owners manage their own
 * keys (docs/api.md, "Developer portal").
 *
 * - `accounts.key_limit`: active keys the account may hold; the operator sets it.
 * - `api_keys.label` and `api_keys.issued_by`: the owner's name for a key, and whether the
 *   operator or the owner created it; the owner's creations in the last rolling hour are counted
 *   from `(account_id, issued_by, created_ms)`.
 * - `portal_sign_in_links`: one-time links, stored as SHA-256 digests of their tokens. `used_ms`
 *   moves from NULL once, by one conditional UPDATE, so a link signs in at most one browser.
 * - `portal_sessions`: sessions, stored as SHA-256 digests of the cookie value, with the CSRF
 *   token of their forms and the account owner's email at sign-in: a session whose account is
 *   gone or has another owner is over.
 */
import type { Migration } from "./migrate.ts";

export const PORTAL_MIGRATIONS: Migration[] = [
  {
    version: 30,
    sql: `
ALTER TABLE accounts ADD COLUMN key_limit INTEGER NOT NULL DEFAULT 10;
ALTER TABLE api_keys ADD COLUMN label TEXT;
ALTER TABLE api_keys ADD COLUMN issued_by TEXT NOT NULL DEFAULT 'operator';  -- operator | owner
CREATE INDEX api_keys_issued ON api_keys(account_id, issued_by, created_ms);

CREATE TABLE portal_sign_in_links (
  digest TEXT PRIMARY KEY,            -- hex SHA-256 of the token; the token itself is never stored
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  owner TEXT NOT NULL,                -- the account's email when the link was issued
  created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  used_ms INTEGER                     -- NULL until the link signs someone in
) WITHOUT ROWID;
CREATE INDEX portal_sign_in_links_expiry ON portal_sign_in_links(expires_ms);

CREATE TABLE portal_sessions (
  digest TEXT PRIMARY KEY,            -- hex SHA-256 of the cookie value
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  owner TEXT NOT NULL,                -- the account's email at sign-in
  csrf_token TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX portal_sessions_expiry ON portal_sessions(expires_ms);
`,
  },
];
