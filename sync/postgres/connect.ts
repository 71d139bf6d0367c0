/**
 * Connecting to a PostgreSQL upstream, and the checks made before anything is written: each
 * failure becomes one line naming the cause and the fix (docs/postgres.md, "Follow your PostgreSQL").
 */
import pg from "pg";
import { ident, type PostgresSource, UPSTREAM_COLUMNS } from "./schema.ts";

export class UpstreamError extends Error {}

/** How long a connection attempt may take before the host counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5000;

export function clientConfig(source: PostgresSource, replication = false): pg.ClientConfig {
  return {
    connectionString: source.connectionString,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: "marquee",
    ...(replication ? { replication: "database" } : {}),
  } as pg.ClientConfig;
}

/** A PostgreSQL or network error as one line with its fix. */
export function explain(err: unknown, source: PostgresSource): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  switch (e.code) {
    case "ECONNREFUSED":
    case "ENOTFOUND":
    case "EHOSTUNREACH":
    case "ETIMEDOUT":
    case "ECONNRESET":
    case "EAI_AGAIN":
      return new UpstreamError(
        `cannot reach PostgreSQL at ${source.display} (${e.code}); check the host and port in the URL and that the server accepts TCP connections`,
      );
    case "28P01":
    case "28000":
      return new UpstreamError(
        `PostgreSQL at ${source.display} refused the login of role "${source.user}" (${message}); check the user and password in the URL`,
      );
    case "3D000":
      return new UpstreamError(`${message} at ${source.display}; check the database name in the URL`);
    case "42501":
      return new UpstreamError(
        `role "${source.user}" lacks a privilege (${message}); as the tables' owner run: ` +
          `GRANT USAGE ON SCHEMA ${ident(source.schema)} TO ${ident(source.user)}; ` +
          `GRANT SELECT ON ${ident(source.schema)}.venues, ${ident(source.schema)}.events TO ${ident(source.user)}; ` +
          `ALTER ROLE ${ident(source.user)} REPLICATION`,
      );
  }
  if (/Connection terminated|server closed the connection/i.test(message)) {
    return new UpstreamError(
      `lost the connection to PostgreSQL at ${source.display} (${message}); check that the server is up`,
    );
  }
  if (/can no longer get changes from replication slot|has been invalidated/i.test(message)) {
    // max_slot_wal_keep_size let the server drop log the slot still needed.
    return new UpstreamError(
      `${message} at ${source.display}; run this sync once with --drop-slot, then again: the replica copies the tables anew`,
    );
  }
  if (/timeout/i.test(message)) {
    return new UpstreamError(
      `cannot reach PostgreSQL at ${source.display} (timed out); check the host and port in the URL`,
    );
  }
  // PostgreSQL's own hint names the fix when it has one ("Free one or increase max_replication_slots.").
  const hint = (err as { hint?: string }).hint;
  return new UpstreamError(`PostgreSQL at ${source.display}: ${message}${hint ? `; ${hint.replace(/\.$/, "")}` : ""}`);
}

export async function connect(source: PostgresSource, replication = false): Promise<pg.Client> {
  const client = new pg.Client(clientConfig(source, replication));
  // A connection lost later surfaces through the query or stream that needed it.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw explain(err, source);
  }
  return client;
}

/**
 * Everything a sync needs from the server, checked before the replica or the server is changed:
 * wal_level, the right to replicate, both tables with every column, and SELECT on them.
 */
export async function assertReady(client: pg.Client, source: PostgresSource): Promise<void> {
  const wal = (await client.query<{ wal_level: string }>("SHOW wal_level")).rows[0].wal_level;
  if (wal !== "logical") {
    throw new UpstreamError(
      `wal_level is "${wal}" at ${source.display}, Marquee needs "logical"; run ALTER SYSTEM SET wal_level = logical and restart PostgreSQL`,
    );
  }
  const role = (
    await client.query<{ rolreplication: boolean; rolsuper: boolean }>(
      "SELECT rolreplication, rolsuper FROM pg_roles WHERE rolname = current_user",
    )
  ).rows[0];
  if (!role?.rolreplication && !role?.rolsuper) {
    throw new UpstreamError(
      `role "${source.user}" may not replicate at ${source.display}; as a superuser run: ALTER ROLE ${ident(source.user)} REPLICATION`,
    );
  }
  for (const [table, wanted] of Object.entries(UPSTREAM_COLUMNS)) {
    const qualified = `${source.schema}.${table}`;
    const { rows } = await client.query<{ column_name: string }>(
      "SELECT attname AS column_name FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped",
      [`${ident(source.schema)}.${ident(table)}`],
    );
    if (rows.length === 0) {
      throw new UpstreamError(
        `table ${qualified} is missing at ${source.display}; create it with: marquee upstream-schema --schema ${source.schema} | psql URL`,
      );
    }
    const have = new Set(rows.map((r) => r.column_name));
    const missing = wanted.filter((c) => !have.has(c));
    if (missing.length > 0) {
      throw new UpstreamError(
        `table ${qualified} lacks column${missing.length > 1 ? "s" : ""} ${missing.join(", ")} at ${source.display}; ` +
          `compare it with: marquee upstream-schema --schema ${source.schema}`,
      );
    }
    const { rows: grants } = await client.query<{ ok: boolean }>("SELECT has_table_privilege($1, 'SELECT') AS ok", [
      `${ident(source.schema)}.${ident(table)}`,
    ]);
    if (!grants[0]?.ok) {
      throw explain({ code: "42501", message: `permission denied for table ${table}` }, source);
    }
  }
}
