/**
 * A serving process following a PostgreSQL upstream (`serve --sync-from postgres://…`): streams
 * the slot's changes into the replica it serves, refreshes the serving snapshot soon after
 * applied changes so a committed upstream change is served within a second, and retries a lost
 * connection with backoff while the API keeps serving what the replica holds
 * (docs/postgres.md, "Follow your PostgreSQL").
 */
import type { Db } from "../../db/driver.ts";
import { countUpstreamRejects, readUpstreamState } from "../../db/replica.ts";
import { createRefresher } from "./refresher.ts";
import { parsePostgresUrl } from "./schema.ts";
import { defaultSlotName } from "./slot.ts";
import { ReplicaBehindError, syncFromPostgres } from "./sync.ts";

export interface FollowerOptions {
  now: () => number;
  /** After the replica or its snapshot changed (the server drops its caches). */
  onChange: () => void;
  log: (line: string) => void;
  slot?: string;
}

export interface UpstreamStatus {
  kind: "postgres";
  source: string;
  slot: string;
  /** `refused`: the replica can no longer follow its slot (`error` says why and what to do); nothing is retried. */
  state: "connecting" | "copying" | "streaming" | "retrying" | "refused" | "stopped";
  /** The last failure, while retrying. */
  error: string | null;
  lagBytes: number | null;
  position: string | null;
  appliedAt: string | null;
  rejects: number;
}

/** Snapshot refreshes while changes stream in are at least this far apart (and at most this late). */
const REFRESH_GAP_MS = 150;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30_000;

export interface PostgresFollower {
  status(): UpstreamStatus;
  /**
   * Settles once the first attempt has shown whether this replica can follow its upstream: it
   * copies, streams, or fails in a way a retry may mend (an unreachable server). Rejects with the
   * `ReplicaBehindError` of a replica that cannot, so a server refuses to start on it.
   */
  checked: Promise<void>;
  stop(): Promise<void>;
}

export function startPostgresFollower(db: Db, spec: string, options: FollowerOptions): PostgresFollower {
  const source = parsePostgresUrl(spec);
  const controller = new AbortController();
  let state: UpstreamStatus["state"] = "connecting";
  let error: string | null = null;
  let lagBytes: number | null = null;
  const refresher = createRefresher(db, {
    gapMs: REFRESH_GAP_MS,
    now: options.now,
    after: options.onChange,
    onError: (err) => options.log(`snapshot refresh failed: ${err.message}`),
  });

  let settle: { resolve(): void; reject(err: Error): void } | null = null;
  const checked = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const verdict = (err?: Error) => {
    if (err) settle?.reject(err);
    else settle?.resolve();
    settle = null;
  };
  const loop = async () => {
    let backoff = BACKOFF_FIRST_MS;
    while (!controller.signal.aborted) {
      state = readUpstreamState(db).position === null ? "copying" : "connecting";
      try {
        await syncFromPostgres(db, spec, {
          slot: options.slot,
          follow: true,
          signal: controller.signal,
          now: options.now,
          onChecked: () => verdict(),
          onStreaming: () => {
            state = "streaming";
            error = null;
            backoff = BACKOFF_FIRST_MS;
            // The initial copy (or a resumed run) changed rows the snapshot does not have yet.
            refresher.changed();
          },
          onProgress: (p) => {
            if (p.phase === "copy") state = "copying";
          },
          // The caches are dropped once, after the refresh that follows (at most REFRESH_GAP_MS
          // later), not also here: each drop makes the next requests miss, and a change is
          // served within a second either way.
          onApplied: (result) => {
            if (result.applied > 0) refresher.changed();
          },
          onReject: (r) => options.log(`rejected ${r.table} ${r.id}: ${r.reason}`),
          onLag: (bytes) => (lagBytes = bytes),
        });
      } catch (err) {
        if (controller.signal.aborted) break;
        if (err instanceof ReplicaBehindError) {
          // A retry cannot mend it: served on, the replica would be silently stale.
          state = "refused";
          error = err.message;
          // At start the server refuses with this error itself; later it is logged once.
          if (settle) verdict(err);
          else options.log(`sync from postgres ${source.display} refused: ${error}`);
          break;
        }
        verdict();
        state = "retrying";
        error = (err as Error).message;
        options.log(
          `sync from postgres ${source.display} failed: ${error}; retrying in ${(backoff / 1000).toFixed(1)} s`,
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoff);
          const stop = () => {
            clearTimeout(timer);
            resolve();
          };
          controller.signal.addEventListener("abort", stop, { once: true });
        });
        backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
      }
    }
    if (state !== "refused") state = "stopped";
    verdict();
  };
  const running = loop();

  return {
    checked,
    status() {
      const upstream = readUpstreamState(db);
      return {
        kind: "postgres",
        source: source.display,
        slot: upstream.slot ?? options.slot ?? defaultSlotName(db.path),
        state,
        error,
        lagBytes,
        position: upstream.position,
        appliedAt: upstream.appliedAt === null ? null : new Date(upstream.appliedAt).toISOString(),
        rejects: countUpstreamRejects(db),
      };
    },
    async stop() {
      controller.abort();
      refresher.cancel();
      await running;
    },
  };
}
