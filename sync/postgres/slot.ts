/**
 * The replica's place on a PostgreSQL server: its publication and its replication slot, how they
 * are named, found, measured and dropped (docs/postgres.md, "Follow your PostgreSQL").
 */
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import type pg from "pg";
import type { Db } from "../../db/driver.ts";
import { readSourceKind, readUpstreamState, SourceKindError, writeUpstreamState } from "../../db/replica.ts";
import { connect, explain, UpstreamError } from "./connect.ts";
import { ident, type PostgresSource, parsePostgresUrl } from "./schema.ts";

const SLOT_NAME = /^[a-z0-9_]{1,63}$/;

/** The replica's slot name by default: derived from the replica file's absolute path. */
export function defaultSlotName(dbPath: string): string {
  const base = dbPath
    .split("/")
    .pop()!
    .replace(/\.[a-z0-9]+$/i, "")
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 30);
  const hash = createHash("sha256").update(resolve(dbPath)).digest("hex").slice(0, 10);
  return `marquee_${base}_${hash}`;
}

export function publicationName(schema: string): string {
  return `marquee_${schema.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`.slice(0, 63);
}

export function slotOf(db: Db, requested: string | undefined): string {
  const slot = requested ?? readUpstreamState(db).slot ?? defaultSlotName(db.path);
  if (!SLOT_NAME.test(slot))
    throw new UpstreamError(`--slot ${slot}: a slot name is 1 to 63 lowercase letters, digits and underscores`);
  return slot;
}

/** Refuses, before anything is written, a replica that follows another kind of source. */
export function assertFollowsPostgres(db: Db): void {
  const kind = readSourceKind(db);
  if (kind === "ndjson" || kind === "api") {
    const follows = kind === "api" ? "another deployment's API" : "NDJSON records";
    throw new SourceKindError(
      `this replica (${db.path}) follows ${follows}, not a PostgreSQL database; sync PostgreSQL into a new replica (--db PATH)`,
    );
  }
}

export async function ensurePublication(client: pg.Client, source: PostgresSource, name: string): Promise<void> {
  const tables = `${ident(source.schema)}.venues, ${ident(source.schema)}.events`;
  const { rowCount } = await client.query("SELECT 1 FROM pg_publication WHERE pubname = $1", [name]);
  if (rowCount) {
    // One made by hand may leave a table out, and its changes would never arrive.
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename IN ('venues', 'events')",
      [name, source.schema],
    );
    const missing = ["venues", "events"].filter((t) => !rows.some((r) => r.tablename === t));
    if (missing.length === 0) return;
    throw new UpstreamError(
      `publication ${name} does not cover ${missing.map((t) => `${source.schema}.${t}`).join(" and ")}; as the tables' owner run: ` +
        `ALTER PUBLICATION ${ident(name)} ADD TABLE ${missing.map((t) => `${ident(source.schema)}.${t}`).join(", ")}`,
    );
  }
  try {
    await client.query(`CREATE PUBLICATION ${ident(name)} FOR TABLE ${tables}`);
  } catch (err) {
    if ((err as { code?: string }).code !== "42501") throw err;
    throw new UpstreamError(
      `role "${source.user}" may not create the publication (${(err as Error).message}); as the tables' owner run: CREATE PUBLICATION ${ident(name)} FOR TABLE ${tables}`,
    );
  }
}

/**
 * The slot, if it exists. One still in use is waited for a few seconds: after a crash of the
 * process that streamed from it, the server takes a moment to notice the closed connection.
 */
export async function slotExists(
  client: pg.Client,
  slot: string,
): Promise<{ active: boolean; confirmed: string | null } | null> {
  const deadline = performance.now() + SLOT_RELEASE_WAIT_MS;
  for (;;) {
    const { rows } = await client.query<{ active: boolean; confirmed: string | null }>(
      "SELECT active, confirmed_flush_lsn::text AS confirmed FROM pg_replication_slots WHERE slot_name = $1",
      [slot],
    );
    if (!rows[0]?.active || performance.now() > deadline) return rows[0] ?? null;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const SLOT_RELEASE_WAIT_MS = 5000;

export async function readLag(client: pg.Client, slot: string): Promise<number | null> {
  const { rows } = await client.query<{ lag: string | null }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint AS lag FROM pg_replication_slots WHERE slot_name = $1",
    [slot],
  );
  return rows[0]?.lag == null ? null : Number(rows[0].lag);
}

/** `--drop-slot`: removes the replica's slot; the replica will copy the tables again next time. */
export async function dropSlot(db: Db, spec: string, requested?: string): Promise<{ slot: string; dropped: boolean }> {
  const source = parsePostgresUrl(spec);
  assertFollowsPostgres(db);
  const slot = slotOf(db, requested);
  const client = await connect(source);
  try {
    const existing = await slotExists(client, slot);
    if (existing?.active)
      throw new UpstreamError(`replication slot ${slot} is in use by another process; stop it first`);
    if (existing)
      await client.query("SELECT pg_drop_replication_slot($1)", [slot]).catch((err) => {
        throw explain(err, source);
      });
    if (readSourceKind(db) === "postgres") writeUpstreamState(db, { position: null });
    return { slot, dropped: existing !== null };
  } finally {
    await client.end().catch(() => {});
  }
}
