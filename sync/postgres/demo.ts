/**
 * `marquee demo-data --out postgres://…`: the demo record stream (sync/demo/generate.ts) written
 * into the upstream tables, so that the tables hold what the stream leaves behind when applied
 * in order: each row its last version, deleted rows absent. The stream is loaded with COPY into
 * a temporary table and folded there in SQL, so neither side holds the data set in memory.
 */
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { type DemoOptions, type DemoSummary, writeDemoData } from "../demo/generate.ts";
import { ident, type PostgresSource, upstreamDdl } from "./schema.ts";

/** COPY's text format: a backslash is written twice (JSON text holds no raw tab or newline). */
const escapeCopy = (chunk: string) => (chunk.includes("\\") ? chunk.replaceAll("\\", "\\\\") : chunk);

/** The last version of each row, by seq: upserted unless that version is a delete. */
function foldSql(schema: string): string {
  const s = ident(schema);
  const last = (entity: string, kind: string) => `
    SELECT DISTINCT ON (id) * FROM (
      SELECT (r->>'seq')::bigint AS seq, r->>'type' AS type, coalesce((r->'${kind}'->>'id')::bigint, (r->>'id')::bigint) AS id, r->'${kind}' AS x
      FROM marquee_demo_load WHERE r->>'type' = '${kind}' OR (r->>'type' = 'delete' AND r->>'entity' = '${entity}')
    ) v ORDER BY id, seq DESC`;
  return `
DELETE FROM ${s}.venues WHERE id IN (SELECT id FROM (${last("venue", "venue")}) d WHERE type = 'delete');
INSERT INTO ${s}.venues (id, name, city, state, timezone, latitude, longitude, geocode_precision, visible)
SELECT id, x->>'name', x->>'city', x->>'state', x->>'timezone', (x->>'latitude')::float8, (x->>'longitude')::float8,
       x->>'geocodePrecision', (x->>'visible')::boolean
FROM (${last("venue", "venue")}) l WHERE type = 'venue'
ON CONFLICT (id) DO UPDATE SET name = excluded.name, city = excluded.city, state = excluded.state, timezone = excluded.timezone,
  latitude = excluded.latitude, longitude = excluded.longitude, geocode_precision = excluded.geocode_precision, visible = excluded.visible;
DELETE FROM ${s}.events WHERE id IN (SELECT id FROM (${last("event", "event")}) d WHERE type = 'delete');
INSERT INTO ${s}.events (id, venue_id, title, slug, start_date, end_date, cost_text, is_free, is_sold_out, is_low_tickets, age,
  website, website_broken, image_url, categories, source, status, duplicate_of, ticketed, ticket_links)
SELECT id, (x->>'venueId')::bigint, x->>'title', x->>'slug', (x->>'startDate')::timestamptz, (x->>'endDate')::timestamptz,
       x->>'costText', (x->>'isFree')::boolean, coalesce((x->>'isSoldOut')::boolean, false), coalesce((x->>'isLowTickets')::boolean, false),
       x->>'age', x->>'website', coalesce((x->>'websiteBroken')::boolean, false), x->>'imageUrl',
       ARRAY(SELECT jsonb_array_elements_text(coalesce(x->'categories', '[]'))), x->>'source', x->>'status',
       (x->>'duplicateOf')::bigint, coalesce((x->>'ticketed')::boolean, true), coalesce(x->'ticketLinks', '[]')
FROM (${last("event", "event")}) l WHERE type = 'event'
ON CONFLICT (id) DO UPDATE SET venue_id = excluded.venue_id, title = excluded.title, slug = excluded.slug,
  start_date = excluded.start_date, end_date = excluded.end_date, cost_text = excluded.cost_text, is_free = excluded.is_free,
  is_sold_out = excluded.is_sold_out, is_low_tickets = excluded.is_low_tickets, age = excluded.age, website = excluded.website,
  website_broken = excluded.website_broken, image_url = excluded.image_url, categories = excluded.categories,
  source = excluded.source, status = excluded.status, duplicate_of = excluded.duplicate_of, ticketed = excluded.ticketed,
  ticket_links = excluded.ticket_links;
`;
}

/** Writes the demo data set into the upstream tables (created when missing), in one transaction. */
export async function writeDemoToPostgres(
  client: pg.Client,
  source: PostgresSource,
  options: DemoOptions,
  onChunk?: (records: number) => void,
): Promise<DemoSummary> {
  await client.query("BEGIN");
  try {
    await client.query(upstreamDdl(source.schema));
    await client.query("CREATE TEMP TABLE marquee_demo_load (r jsonb NOT NULL) ON COMMIT DROP");
    const copy = client.query(copyFrom("COPY marquee_demo_load (r) FROM STDIN"));
    const done = new Promise<void>((resolve, reject) => {
      copy.on("finish", resolve);
      copy.on("error", reject);
    });
    let records = 0;
    const summary = await writeDemoData(options, (chunk) => {
      records += chunk.split("\n").length - 1;
      onChunk?.(records);
      if (copy.write(escapeCopy(chunk))) return;
      return new Promise<void>((resolve) => copy.once("drain", resolve));
    });
    copy.end();
    await done;
    await client.query(foldSql(source.schema));
    await client.query("COMMIT");
    return summary;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}
