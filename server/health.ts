/**
 * What `/healthz`, `/readyz` and the metrics say about a serving process (docs/operations.md,
 * Health): the replica's counts, kept until the replica changes (counting a million events takes
 * a few hundred milliseconds; its state is read first, so a commit in between only makes the
 * kept counts newer than their key), and the readiness checks:
 *
 * - `snapshot`: the replica has a serving snapshot; an empty replica that follows no upstream is
 *   ready without one (a new test instance answers at once);
 * - `ledger`: the ledger answers (SQLite; Redis within its command timeout);
 * - `upstream`, only while one is followed (`--sync-from postgres://…`): it is streaming, or it
 *   applied changes within `--max-upstream-lag` seconds.
 */
import type { Db } from "../db/driver.ts";
import { readReplicaState } from "../db/hydrate.ts";
import { type ReplicaStats, readReplicaStats } from "../db/replica.ts";
import type { Clock } from "./clock.ts";
import type { Ledger } from "./ledger/ledger.ts";

/** What readiness reads of a followed upstream (sync/postgres/follower.ts `UpstreamStatus`). */
export interface UpstreamReport {
  state: string;
  /** The last failure, while retrying. */
  error: string | null;
  /** Log the replication slot holds back (a PostgreSQL upstream only). */
  lagBytes?: number | null;
  /** ISO 8601, or null before anything was applied. */
  appliedAt: string | null;
  /**
   * An upstream read in passes (a replica of another deployment): the seconds between passes,
   * which the allowed lag adds to, since nothing is applied while a follower waits for its next.
   */
  passEveryS?: number;
}

export interface HealthDeps {
  replica: Db;
  ledger: Pick<Ledger, "ping">;
  clock: Clock;
  maxUpstreamLagS: number;
  /** The upstream being followed now, if any (set after start-up by the background work). */
  upstream(): { status(): UpstreamReport } | undefined;
}

export interface Check {
  ok: boolean;
  /** What failed, or a note on what passed. */
  detail?: string;
}

/** `workers`: under `serve --workers N`, whether every worker answered (server/admin.ts). */
export type CheckName = "snapshot" | "ledger" | "upstream" | "workers";

export interface Readiness {
  ready: boolean;
  checks: Partial<Record<CheckName, Check>>;
  /** The names of the failing checks. */
  failing: CheckName[];
  /** What the checks read, for the metrics. */
  stats: ReplicaStats;
  upstream: UpstreamReport | null;
  ledgerUp: boolean;
}

/** Longest wait for the ledger's answer; Redis gives up sooner (server/ledger/redis-connection.ts). */
const LEDGER_CHECK_MS = 2_000;

export class Health {
  #kept: { state: string; stats: ReplicaStats } | undefined;

  constructor(private readonly deps: HealthDeps) {}

  /** The server's now (the test clock in test mode). */
  now(): number {
    return this.deps.clock.now();
  }

  /** The replica's counts and snapshot time, recounted only after the replica changed. */
  stats(): ReplicaStats {
    const state = readReplicaState(this.deps.replica);
    if (this.#kept?.state !== state) this.#kept = { state, stats: readReplicaStats(this.deps.replica) };
    return this.#kept.stats;
  }

  async readiness(): Promise<Readiness> {
    const stats = this.stats();
    const upstream = this.deps.upstream()?.status() ?? null;
    const checks: Readiness["checks"] = { snapshot: this.snapshotCheck(stats, upstream) };
    const ledger = await this.ledgerCheck();
    checks.ledger = ledger;
    // `idle`: an API replica that no process here follows; it is served as it stands, unchecked.
    if (upstream && upstream.state !== "idle") checks.upstream = this.upstreamCheck(upstream);
    const failing = (Object.keys(checks) as CheckName[]).filter((name) => !checks[name]!.ok);
    return { ready: failing.length === 0, checks, failing, stats, upstream, ledgerUp: ledger.ok };
  }

  private snapshotCheck(stats: ReplicaStats, upstream: UpstreamReport | null): Check {
    if (stats.snapshotAt !== null) return { ok: true };
    if (!upstream && stats.events === 0 && stats.venues === 0) return { ok: true, detail: "empty replica" };
    return {
      ok: false,
      detail:
        upstream?.state === "copying"
          ? "no serving snapshot yet: the initial copy from the upstream is running"
          : "no serving snapshot yet",
    };
  }

  private async ledgerCheck(): Promise<Check> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${LEDGER_CHECK_MS} ms`)), LEDGER_CHECK_MS);
    });
    try {
      await Promise.race([this.deps.ledger.ping(), late]);
      return { ok: true };
    } catch (err) {
      return { ok: false, detail: `the ledger does not answer: ${(err as Error)?.message ?? err}` };
    } finally {
      clearTimeout(timer);
    }
  }

  private upstreamCheck(upstream: UpstreamReport): Check {
    if (upstream.state === "streaming") return { ok: true, detail: "streaming" };
    const limitS = this.deps.maxUpstreamLagS + (upstream.passEveryS ?? 0);
    const appliedMs = upstream.appliedAt === null ? null : Date.parse(upstream.appliedAt);
    const ageS = appliedMs === null ? null : Math.max(0, Math.round((this.deps.clock.now() - appliedMs) / 1000));
    const state = `${upstream.state}${upstream.error ? ` (${upstream.error})` : ""}`;
    if (ageS !== null && ageS <= limitS) return { ok: true, detail: `${state}, last applied ${ageS} s ago` };
    return {
      ok: false,
      detail: `${state}; ${ageS === null ? "nothing applied yet" : `last applied ${ageS} s ago`}, more than --max-upstream-lag ${limitS} s`,
    };
  }
}

/** The JSON `/readyz` answers (docs/operations.md, Health). */
export function readinessBody(r: Pick<Readiness, "ready" | "checks" | "failing">): object {
  return { status: r.ready ? "ready" : "not ready", failing: r.failing, checks: r.checks };
}
