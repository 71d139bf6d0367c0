/**
 * What a replica of another deployment keeps about its upstream (docs/operations.md, Health):
 * the scope its last complete pass walked (the list path reads it to know which filters it can
 * answer exactly) and that pass's figures, and the status /healthz shows under `upstream`.
 */
import type { Db } from "../../db/driver.ts";
import { readUpstreamState, writeUpstreamState } from "../../db/replica.ts";
import { parseRecordedScope, type RecordedScope } from "./scope.ts";

/** The last complete pass, as recorded in the replica. */
export interface LastPass {
  completedAt: string;
  seconds: number;
  /** Rows delivered, i.e. charged to the account's allowance. */
  rows: number;
  requests: number;
  pages: number;
  upserted: number;
  removed: number;
  /** Of `rows`, those of the aggregator walk (`--aggregators`). */
  aggregatorRows: number;
}

export function recordCompletePass(db: Db, scope: RecordedScope, pass: LastPass, nowMs: number): void {
  db.transaction(() =>
    writeUpstreamState(db, { scope: JSON.stringify(scope), lastPass: JSON.stringify(pass), appliedAt: nowMs }),
  );
}

export function readApiReplica(db: Db): { scope: RecordedScope | null; lastPass: LastPass | null } {
  const state = readUpstreamState(db);
  let lastPass: LastPass | null = null;
  try {
    lastPass = state.lastPass === null ? null : (JSON.parse(state.lastPass) as LastPass);
  } catch {
    lastPass = null;
  }
  return { scope: parseRecordedScope(state.scope), lastPass };
}

/** What the process following the upstream is doing; `idle` when none is (the replica is synced elsewhere). */
export type FollowState = "walking" | "waiting" | "idle" | "stopped";

export interface ApiUpstreamStatus {
  kind: "api";
  source: string | null;
  state: FollowState;
  /** The last pass cut short or refused, while the next has not completed; else null. */
  error: string | null;
  lastPass: (LastPass & { ageSeconds: number }) | null;
  /** When the last complete pass ended (as the PostgreSQL follower's `appliedAt`); null before one. */
  appliedAt: string | null;
  /** The source tokens events are recorded under, and what is known of aggregators (the last complete pass's). */
  sources: string[] | null;
  aggregators: RecordedScope["aggregators"] | null;
  /** While a process follows it: the seconds between passes (what readiness allows beside its lag). */
  passEveryS?: number;
}

export function readApiStatus(
  db: Db,
  nowMs: number,
  live: { source: string; state: FollowState; error: string | null } | null,
): ApiUpstreamStatus {
  const { scope, lastPass } = readApiReplica(db);
  return {
    kind: "api",
    source: live?.source ?? scope?.url ?? null,
    state: live?.state ?? "idle",
    error: live?.error ?? null,
    lastPass: lastPass && {
      ...lastPass,
      ageSeconds: Math.max(0, Math.round((nowMs - Date.parse(lastPass.completedAt)) / 1000)),
    },
    appliedAt: lastPass?.completedAt ?? null,
    sources: scope?.sources ?? null,
    aggregators: scope?.aggregators ?? null,
  };
}
