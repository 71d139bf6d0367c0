/**
 * A serving process following another deployment (`serve --sync-from-api URL`,
 * docs/upstream-records.md, A replica of another deployment): a pass at start and one every
 * interval after the last began, while the API keeps serving what the replica holds, through any
 * failure upstream. A refused pass (a revoked key, a lapsed plan) is logged and tried again at the
 * next interval, since an operator may fix the account without restarting the server.
 * `status()` is what /healthz shows under `upstream`.
 */
import { API_SYNC } from "../../db/contract.ts";
import type { Db } from "../../db/driver.ts";
import { sleep } from "../source-lines.ts";
import { runApiPass } from "./pass.ts";
import { formatPassSummary } from "./report.ts";
import type { ApiScope } from "./scope.ts";
import { type ApiUpstreamStatus, type FollowState, readApiStatus } from "./state.ts";

export interface ApiFollowerOptions {
  key: string;
  reserve: number;
  aggregators: boolean;
  intervalS: number;
  /** The serving process's clock: the snapshot's stamp and the age of the last pass. */
  now: () => number;
  /** After a pass applied something (the server drops its caches). */
  onChange: () => void;
  log: (line: string) => void;
}

export interface ApiFollower {
  status(): ApiUpstreamStatus;
  stop(): Promise<void>;
}

export function startApiFollower(db: Db, scope: ApiScope, options: ApiFollowerOptions): ApiFollower {
  const controller = new AbortController();
  let state: FollowState = "walking";
  let error: string | null = null;
  let capped = false;

  const loop = async () => {
    while (!controller.signal.aborted) {
      state = "walking";
      const started = performance.now();
      try {
        const summary = await runApiPass(db, scope, {
          key: options.key,
          reserve: options.reserve,
          aggregators: options.aggregators,
          signal: controller.signal,
          now: options.now,
          capped,
          batchEvents: API_SYNC.serveBatchEvents,
          notice: (line) => options.log(`sync from ${scope.display}: ${line}`),
        });
        capped = summary.capped;
        if (summary.snapshotEvents !== null || summary.removed > 0 || summary.upserted > 0) options.onChange();
        if (summary.cutShort?.reason === "signal") break;
        error = summary.cutShort ? summary.cutShort.message : null;
        options.log(formatPassSummary(summary));
      } catch (err) {
        // The replica itself failed (a full disk, say): said, and tried again at the next interval.
        error = (err as Error).message;
        options.log(`sync from ${scope.display} failed: ${error}`);
      }
      state = "waiting";
      await sleep(Math.max(0, options.intervalS * 1000 - (performance.now() - started)), controller.signal);
    }
    state = "stopped";
  };
  const running = loop();

  return {
    status: () => ({
      ...readApiStatus(db, options.now(), { source: scope.display, state, error }),
      passEveryS: options.intervalS,
    }),
    async stop() {
      controller.abort();
      await running;
    },
  };
}
