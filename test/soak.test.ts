/**
 * Memory under a flood of unique queries (docs/performance.md): a spawned Bun server on the
 * 50,000-event demo replica answers 16 connections of queries no cache has seen (states and
 * cities, windows, circles, polygons, sources, limits) for 20 seconds, and its resident memory
 * never passes the ceiling docs/performance.md states. Every cache of the serving process is bounded by
 * entries and bytes (docs/architecture.md, Caches), so memory levels off instead of growing with
 * the number of distinct queries.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { procStatusKiB } from "../server/proc-status.ts";
import { Client, startBunServer } from "./harness.ts";

/**
 * The ceiling (docs/performance.md) for a serving process's private memory (RssAnon + swap: the
 * memory-mapped replica's file pages are the OS's cache) under unique traffic on the demo replica. The caches
 * hold about 100 MiB by their byte bounds; above them is garbage the collector has not reached
 * yet, which the server's guard collects in full past HOT_PATH.collectAbovePrivateBytes (at most every
 * HOT_PATH.collectEveryMs). Peaks measured here: 307 and 480 MiB; caches bounded by entries alone reached 898 MB.
 */
const PRIVATE_CEILING_BYTES = 640 * 1024 * 1024;
const CONNECTIONS = 16;
const DURATION_MS = 20_000;

const STATES = ["NY", "CA", "TX", "IL", "FL", "WA", "MA", "PA", "GA", "CO", "OR", "AZ", "TN", "LA", "MN"];
const CENTRES: Array<[number, number]> = [
  [40.758, -73.9855],
  [34.0522, -118.2437],
  [41.8781, -87.6298],
  [29.7604, -95.3698],
  [47.6062, -122.3321],
  [37.7749, -122.4194],
  [39.7392, -104.9903],
  [42.3601, -71.0589],
];

function privateOf(pid: number): number {
  const fields = procStatusKiB(pid)!;
  return ((fields.get("RssAnon") ?? 0) + (fields.get("VmSwap") ?? 0)) * 1024;
}

/** The n-th query: every one differs in its window, its point or its tokens, so no cache has seen it. */
function uniqueQuery(n: number): string {
  const day = new Date(Date.now() + (n % 80) * 86_400_000).toISOString().slice(0, 10);
  const after = `${day}T${String(n % 24).padStart(2, "0")}:${String(n % 60).padStart(2, "0")}:${String((n * 7) % 60).padStart(2, "0")}Z`;
  const [lat, lng] = CENTRES[n % CENTRES.length];
  const jitter = (n % 997) / 10_000;
  switch (n % 5) {
    case 0:
      return `state=${STATES[n % STATES.length]}&starts_after=${after}&limit=${1 + (n % 100)}`;
    case 1:
      return `lat=${(lat + jitter).toFixed(4)}&lng=${(lng - jitter).toFixed(4)}&radius_miles=${1 + (n % 24)}&include_centroids=${n % 2 === 0}`;
    case 2: {
      const d = 0.05 + (n % 50) / 1_000;
      const ring = [
        [lat + jitter, lng],
        [lat + jitter + d, lng + d],
        [lat + jitter - d, lng + d],
      ];
      return `polygon=${encodeURIComponent(ring.map(([a, b]) => `${a.toFixed(5)},${b.toFixed(5)}`).join(";"))}&limit=50`;
    }
    case 3:
      return `source=${["ticketmaster", "scraper:", "eventbrite", "songkick", "dice"][n % 5]}${n % 13}&starts_after=${after}`;
    default:
      return `starts_after=${after}&exclude_sold_out=${n % 2 === 0}&exclude_aggregators=${n % 3 === 0}&limit=100`;
  }
}

let server: Awaited<ReturnType<typeof startBunServer>>;
let key: string;

beforeAll(async () => {
  server = await startBunServer(["--demo"]);
  const c = new Client(server);
  key = await c.keyFor({ plan: "enterprise", rateSustained: 10_000_000, rateBurst: 10_000_000 });
}, 60_000);
afterAll(() => server?.close());

it(`keeps private memory under ${PRIVATE_CEILING_BYTES / 1024 / 1024} MiB through ${DURATION_MS / 1000} s of unique queries`, async () => {
  const pid = server.child.pid!;
  const start = privateOf(pid);
  let peak = start;
  const sampler = setInterval(() => {
    peak = Math.max(peak, privateOf(pid));
  }, 200);
  const deadline = Date.now() + DURATION_MS;
  let next = 0;
  const statuses = new Map<number, number>();
  const connection = async () => {
    while (Date.now() < deadline) {
      const res = await fetch(`${server.baseUrl}/v1/events?${uniqueQuery(next++)}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, privateOf(pid));
  const mib = (b: number) => Math.round(b / 1024 / 1024);
  console.log(
    `soak: ${next} unique queries, statuses ${JSON.stringify(Object.fromEntries(statuses))}, private memory ${mib(start)} MiB at start, peak ${mib(peak)} MiB`,
  );
  // Every query was a valid one: the server answered pages, not refusals.
  expect([...statuses.keys()]).toEqual([200]);
  expect(next).toBeGreaterThan(1_000);
  expect(peak).toBeLessThan(PRIVATE_CEILING_BYTES);
}, 60_000);
