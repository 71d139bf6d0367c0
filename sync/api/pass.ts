/**
 * One pass of a replica of another deployment (docs/upstream-records.md, A replica of another
 * deployment): every window from the upstream's now to the account's horizon walked to
 * `hasMore: false`, once per source token the scope names (so each event is recorded under the
 * tokens it was delivered for), after an aggregator walk when asked for one. Every delivered
 * event is upserted as it arrives. Only a pass that walked everything to the end sweeps what it
 * did not see; one cut short (an error, the budget's reserve, a signal) or refused removes nothing
 * and says why.
 */
import type { Db } from "../../db/driver.ts";
import { snapshotLags } from "../serving-snapshot.ts";
import { refreshServingSnapshot } from "../sync-from.ts";
import { type ClientStats, UpstreamClient } from "./client.ts";
import { type CutShortReason, LookaheadRefusal, PassCutShort, UpstreamRefusal } from "./errors.ts";
import { deliveredRecords, mergedSource, UNKNOWN_SOURCE } from "./records.ts";
import { type ApiScope, recordedScope, requestQuery, type WalkRequest } from "./scope.ts";
import { recordCompletePass } from "./state.ts";
import { type Window, WindowPlan } from "./windows.ts";
import { PassWriter } from "./writer.ts";

export interface PassOptions {
  key: string;
  /** Share of the row budget or trial allowance left unspent (`--budget-reserve`). */
  reserve: number;
  /** `--aggregators`: a first walk with `exclude_aggregators=true` tells aggregators' events apart. */
  aggregators: boolean;
  signal?: AbortSignal;
  /** "Now" for the snapshot's stamp and the pass's record (the serving process's clock). */
  now: () => number;
  /** Explicit window ends were refused by an earlier pass: leave them out from the start. */
  capped?: boolean;
  /** Events per transaction (API_SYNC.batchEvents; a serving process applies fewer at a time). */
  batchEvents?: number;
  onProgress?: (p: PassProgress) => void;
  notice?: (line: string) => void;
  fetch?: typeof fetch;
}

export interface PassProgress {
  phase: "walk" | "sweep" | "snapshot";
  /** Which walk: the aggregator walk, or the events of one source token (null: all). */
  walk: "aggregators" | "events";
  source: string | null;
  window: number;
  pages: number;
  rows: number;
  /** Distinct events delivered so far. */
  events: number;
  elapsedMs: number;
}

export interface PassSummary extends ClientStats {
  source: string;
  complete: boolean;
  /** Why the pass ended early; null for a complete pass. */
  cutShort: { reason: CutShortReason | "refused"; message: string } | null;
  upserted: number;
  removed: number;
  aggregatorRows: number;
  elapsedMs: number;
  /** Events in the snapshot after the pass's refresh; null when it needed none. */
  snapshotEvents: number | null;
  /** For the next pass: whether explicit window ends are refused. */
  capped: boolean;
}

export async function runApiPass(db: Db, scope: ApiScope, options: PassOptions): Promise<PassSummary> {
  const started = performance.now();
  const client = new UpstreamClient({
    endpoint: scope.endpoint,
    key: options.key,
    signal: options.signal,
    reserve: options.reserve,
    notice: options.notice,
    fetch: options.fetch,
  });
  const writer = new PassWriter(db, options.batchEvents);
  let capped = options.capped ?? false;
  let aggregatorRows = 0;
  let removed = 0;
  let cutShort: PassSummary["cutShort"] = null;
  const progress = (phase: PassProgress["phase"], walk: PassProgress["walk"], source: string | null, window = 0) =>
    options.onProgress?.({
      phase,
      walk,
      source,
      window,
      pages: client.stats.pages,
      rows: client.stats.rows,
      events: writer.events.size,
      elapsedMs: performance.now() - started,
    });

  /** Walks every window with `request`'s filters, handing each page's events to `take`. */
  const walk = async (
    request: Pick<WalkRequest, "source" | "excludeAggregators">,
    take: (events: unknown[]) => void,
  ) => {
    const plan = new WindowPlan(Date.now(), scope.geo, capped);
    const kind = request.excludeAggregators ? "aggregators" : "events";
    let index = 1;
    for (let w: Window | null = plan.first(); w !== null; index++) {
      const walked = await walkWindow(w, request, take, () => progress("walk", kind, request.source, index));
      w = walked ? plan.next(w) : plan.refused(w);
      capped = plan.capped;
    }
  };
  /** One window to `hasMore: false`; false when its first page was refused for its dates. */
  const walkWindow = async (
    w: Window,
    request: Pick<WalkRequest, "source" | "excludeAggregators">,
    take: (events: unknown[]) => void,
    tick: () => void,
  ): Promise<boolean> => {
    let cursor: string | null = null;
    for (;;) {
      const query = requestQuery(scope, { ...request, ...w, limit: client.nextLimit(), cursor });
      let page: Awaited<ReturnType<UpstreamClient["get"]>>;
      try {
        page = await client.get(query, scope.geo);
      } catch (err) {
        if (!(err instanceof LookaheadRefusal)) throw err;
        if (cursor === null) return false;
        throw new PassCutShort("error", `the account's lookahead shrank during the pass (${err.message})`);
      }
      take(page.events);
      tick();
      if (!page.hasMore) return true;
      cursor = page.nextCursor;
    }
  };

  try {
    let nonAggregators: Set<unknown> | null = null;
    if (options.aggregators && !scope.excludesAggregators) {
      const seen = new Set<unknown>();
      await walk({ source: null, excludeAggregators: true }, (events) => {
        for (const e of events) seen.add((e as { id?: unknown })?.id);
      });
      nonAggregators = seen;
      aggregatorRows = client.stats.rows;
    }
    const tokens = scope.sources ?? [null];
    // Several tokens: an event delivered under more than one is recorded under all of them.
    const tokensOf = tokens.length > 1 ? new Map<unknown, string[]>() : null;
    for (const token of tokens) {
      await walk({ source: token }, (events) => {
        for (const raw of events) {
          const id = (raw as { id?: unknown })?.id;
          let source = token ?? UNKNOWN_SOURCE;
          if (tokensOf && token !== null) {
            const seen = tokensOf.get(id) ?? [];
            if (!seen.includes(token)) seen.push(token);
            tokensOf.set(id, seen);
            source = mergedSource(seen);
          }
          const aggregator = scope.excludesAggregators ? false : nonAggregators ? !nonAggregators.has(id) : null;
          writer.upsert(deliveredRecords(raw, source, aggregator));
        }
      });
    }
    progress("sweep", "events", null);
    removed = writer.sweep();
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    recordCompletePass(
      db,
      recordedScope(scope, nonAggregators !== null),
      {
        completedAt: new Date(options.now()).toISOString(),
        seconds,
        rows: client.stats.rows,
        requests: client.stats.requests,
        pages: client.stats.pages,
        upserted: writer.events.size,
        removed,
        aggregatorRows,
      },
      options.now(),
    );
  } catch (err) {
    if (err instanceof PassCutShort) cutShort = { reason: err.reason, message: err.message };
    else if (err instanceof UpstreamRefusal) cutShort = { reason: "refused", message: err.message };
    else throw err;
    writer.flush(); // what was delivered stays applied; nothing is removed
  }
  let snapshotEvents: number | null = null;
  if (writer.applied > 0 || snapshotLags(db)) {
    progress("snapshot", "events", null);
    snapshotEvents = refreshServingSnapshot(db, options.now());
  }
  return {
    source: scope.display,
    complete: cutShort === null,
    cutShort,
    ...client.stats,
    upserted: writer.events.size,
    removed,
    aggregatorRows,
    elapsedMs: performance.now() - started,
    snapshotEvents,
    capped,
  };
}
