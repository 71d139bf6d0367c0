/**
 * The demo record stream (docs/operations.md, The program; docs/upstream-records.md): venues first,
 * then events in id order with later versions, deletes and venue changes (renames, hiding,
 * deletion) interleaved the way an upstream feed publishes them. Same options, same bytes.
 */
import { DEMO } from "../../db/contract.ts";
import { type baseEvent, type DemoWorld, firstEvent, updatedEvent } from "./events.ts";
import { Random, WeightedIndex } from "./random.ts";
import { buildVenues, type DemoVenue, venueBody } from "./venues.ts";

export interface DemoOptions {
  events: number;
  seed: string;
  /** `YYYY-MM-DD`: the day event dates are relative to. */
  anchor: string;
}

export interface DemoSummary {
  events: number;
  venues: number;
  records: number;
  bytes: number;
  lastSeq: number;
}

export function parseAnchor(anchor: string): DemoWorld["anchor"] {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(anchor);
  const ms = m ? Date.UTC(+m[1], +m[2] - 1, +m[3]) : NaN;
  if (!m || new Date(ms).toISOString().slice(0, 10) !== anchor)
    throw new Error(`anchor must be a date YYYY-MM-DD, got '${anchor}'`);
  return { year: +m[1], month: +m[2] - 1, day: +m[3] };
}

export const venueCountFor = (events: number) => Math.max(80, Math.round(events / DEMO.eventsPerVenue));

export function createWorld(options: DemoOptions): DemoWorld {
  const venues = buildVenues(options.seed, venueCountFor(options.events));
  return {
    seed: options.seed,
    anchor: parseAnchor(options.anchor),
    venues,
    venuePicker: new WeightedIndex(venues.map((v) => v.popularity)),
    slugs: new Map(),
  };
}

/** Yields upstream records (plain objects) in seq order. */
export function* demoRecords(options: DemoOptions): Generator<Record<string, unknown>> {
  const world = createWorld(options);
  const r = new Random(options.seed, 0x5eed);
  const deletedEvents = new Set<number>();
  const versions = new Map<number, number>();
  let seq = 0;
  const venue = (v: DemoVenue) => ({ type: "venue", seq: ++seq, venue: venueBody(v) });
  const event = (e: ReturnType<typeof baseEvent>) => ({ type: "event", seq: ++seq, event: e });
  const remove = (entity: "event" | "venue", id: number) => ({ type: "delete", seq: ++seq, entity, id });
  const anyLiveEvent = (below: number) => {
    for (let tries = 0; tries < 8; tries++) {
      const id = r.int(1, below);
      if (!deletedEvents.has(id)) return id;
    }
    return undefined;
  };
  const update = (id: number) => {
    const version = (versions.get(id) ?? 0) + 1;
    versions.set(id, version);
    return event(updatedEvent(world, id, version));
  };
  const changeVenue = (v: DemoVenue, change: "hide" | "show" | "rename") => {
    if (change === "hide") v.visible = false;
    else if (change === "show") v.visible = true;
    else v.name = v.name.startsWith("The ") ? v.name.slice(4) : `The ${v.name}`;
    return venue(v);
  };

  for (const v of world.venues) yield venue(v);

  for (let id = 1; id <= options.events; id++) {
    yield event(firstEvent(world, id));
    if (id < 100) continue;
    if (r.chance(0.03)) {
      const target = anyLiveEvent(id - 1);
      if (target) yield update(target);
    }
    if (r.chance(0.004)) {
      const target = anyLiveEvent(id - 1);
      if (target) {
        deletedEvents.add(target);
        yield remove("event", target);
      }
    }
    if (r.chance(0.0004))
      yield changeVenue(
        r.pick(world.venues),
        r.weighted([
          [5, "hide"],
          [2, "show"],
          [3, "rename"],
        ] as const),
      );
    if (r.chance(0.00005)) yield remove("venue", r.pick(world.venues).id);
  }

  // Every kind of change appears at least once, however small the stream.
  if (options.events >= 2) {
    yield changeVenue(world.venues[world.venues.length - 1], "hide");
    yield remove("venue", world.venues[world.venues.length - 2].id);
    const last = options.events;
    if (!deletedEvents.has(last)) yield event({ ...firstEvent(world, last), status: "cancelled" });
    const target = anyLiveEvent(last - 1);
    if (target) yield remove("event", target);
  }
}

/** The stream as NDJSON text in ~1 MB chunks. */
export function* demoChunks(options: DemoOptions): Generator<string> {
  let parts: string[] = [];
  let size = 0;
  for (const record of demoRecords(options)) {
    const line = `${JSON.stringify(record)}\n`;
    parts.push(line);
    size += line.length;
    if (size >= 1 << 20) {
      yield parts.join("");
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield parts.join("");
}

/** Writes the stream to `sink` (awaited, so slow sinks apply back-pressure) and sums it up. */
export async function writeDemoData(
  options: DemoOptions,
  sink: (chunk: string) => void | Promise<void>,
): Promise<DemoSummary> {
  const summary: DemoSummary = {
    events: options.events,
    venues: venueCountFor(options.events),
    records: 0,
    bytes: 0,
    lastSeq: 0,
  };
  for (const chunk of demoChunks(options)) {
    summary.bytes += Buffer.byteLength(chunk);
    summary.records += countLines(chunk);
    await sink(chunk);
  }
  summary.lastSeq = summary.records; // seq runs 1..records
  return summary;
}

function countLines(chunk: string): number {
  let n = 0;
  for (let i = chunk.indexOf("\n"); i !== -1; i = chunk.indexOf("\n", i + 1)) n++;
  return n;
}
