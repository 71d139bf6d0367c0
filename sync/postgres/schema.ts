/**
 * The upstream tables in PostgreSQL (docs/upstream-records.md, "PostgreSQL tables"): their DDL, the
 * columns Marquee reads, and how a source URL names the schema they live in.
 */

export const DEFAULT_SCHEMA = "marquee";

/**
 * Copies from this size on are written by a writer thread while this one reads and checks the
 * rows. The 1,035,952-row demo copy took 12-13 s that way against 17 s on one thread; at 207,184
 * rows the two were within the machine's noise, and one thread leaves the other core to
 * PostgreSQL and to a server (docs/perf-history.md, "Round 10"). Kept here, with the other
 * facts about the upstream that need no PostgreSQL client, for `marquee sync --help`.
 */
export const COPY_THREAD_MIN_ROWS = 500_000;

/** The columns each table must have, in the order Marquee reads them. */
export const UPSTREAM_COLUMNS = {
  venues: ["id", "name", "city", "state", "timezone", "latitude", "longitude", "geocode_precision", "visible"],
  events: [
    "id",
    "venue_id",
    "title",
    "slug",
    "start_date",
    "end_date",
    "cost_text",
    "is_free",
    "is_sold_out",
    "is_low_tickets",
    "age",
    "website",
    "website_broken",
    "image_url",
    "categories",
    "source",
    "status",
    "duplicate_of",
    "ticketed",
    "ticket_links",
  ],
} as const;
export type UpstreamTable = keyof typeof UPSTREAM_COLUMNS;

/** A PostgreSQL identifier, double-quoted when it is not a plain lowercase name. */
export function ident(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** The DDL of both tables: safe to run again (IF NOT EXISTS everywhere). */
export function upstreamDdl(schema = DEFAULT_SCHEMA): string {
  const s = ident(schema);
  return `CREATE SCHEMA IF NOT EXISTS ${s};

CREATE TABLE IF NOT EXISTS ${s}.venues (
  id bigint PRIMARY KEY, name text NOT NULL, city text NOT NULL, state text NOT NULL,
  timezone text, latitude double precision, longitude double precision,
  geocode_precision text,                       -- street | zip | city | unknown | NULL
  visible boolean NOT NULL DEFAULT true);

CREATE TABLE IF NOT EXISTS ${s}.events (
  id bigint PRIMARY KEY, venue_id bigint NOT NULL, title text NOT NULL, slug text NOT NULL,
  start_date timestamptz NOT NULL, end_date timestamptz,
  cost_text text, is_free boolean, is_sold_out boolean NOT NULL DEFAULT false,
  is_low_tickets boolean NOT NULL DEFAULT false, age text,
  website text, website_broken boolean NOT NULL DEFAULT false, image_url text,
  categories text[] NOT NULL DEFAULT '{}', source text NOT NULL,
  status text NOT NULL DEFAULT 'active',         -- active | cancelled | spam | inactive
  duplicate_of bigint, ticketed boolean NOT NULL DEFAULT true,
  ticket_links jsonb NOT NULL DEFAULT '[]');
`;
}

export interface PostgresSource {
  /** The URL without Marquee's own `schema` parameter, for the PostgreSQL client. */
  connectionString: string;
  schema: string;
  /** host:port/database, for messages (never the password). */
  display: string;
  user: string;
}

export const isPostgresUrl = (spec: string) => /^postgres(ql)?:\/\//i.test(spec);

/** Reads `postgres://user:password@host:port/db?schema=NAME`. */
export function parsePostgresUrl(spec: string): PostgresSource {
  const url = new URL(spec);
  const schema = url.searchParams.get("schema") ?? DEFAULT_SCHEMA;
  url.searchParams.delete("schema");
  const database =
    decodeURIComponent(url.pathname.replace(/^\//, "")) || decodeURIComponent(url.username) || "postgres";
  return {
    connectionString: url.toString(),
    schema,
    display: `${url.hostname || "localhost"}:${url.port || 5432}/${database}`,
    user: decodeURIComponent(url.username) || "postgres",
  };
}
