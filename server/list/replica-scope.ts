/**
 * What a replica of another deployment can answer exactly (docs/api.md, A replica of another
 * deployment). The public Event carries no source, so such a replica knows an event's source only
 * as the tokens its URL named, and whether it comes from an aggregator only after an aggregator
 * walk. A `source` outside the recorded tokens, or `exclude_aggregators=true` it cannot tell, is
 * refused with the parameter's own 400 and a message saying why, never answered with a
 * plausible, wrong page. Every other replica answers everything: this reads one row of
 * `sync_state` when the replica changed, then nothing.
 */
import type { Db } from "../../db/driver.ts";
import type { RecentReplicaState } from "../../db/hydrate.ts";
import { parseRecordedScope, type RecordedScope } from "../../sync/api/scope.ts";
import { ApiError } from "../errors.ts";

/** Checks of parameters a replica of another deployment may not answer, in stage 6's order (server/list/parse.ts). */
export interface ScopeCheck {
  sources(tokens: readonly string[]): void;
  excludeAggregators(): void;
}

const SCOPE_SQL =
  "SELECT (SELECT value FROM sync_state WHERE key = 'source_kind') AS kind, (SELECT value FROM sync_state WHERE key = 'source_scope') AS scope";

const named = (tokens: readonly string[]) => tokens.map((t) => `\`${t}\``).join(", ");

/** Owned by the list path's caches (server/list/caches.ts): read again when the replica mark moves. */
export class ReplicaScope {
  #kept: { mark: string; check: ScopeCheck | null } | null = null;

  constructor(
    private readonly db: Db,
    private readonly mark: RecentReplicaState,
  ) {}

  /** The checks this replica needs, or null when it answers every filter. */
  check(): ScopeCheck | null {
    const mark = this.mark.read();
    if (this.#kept?.mark !== mark) this.#kept = { mark, check: this.read() };
    return this.#kept.check;
  }

  clear(): void {
    this.#kept = null;
  }

  private read(): ScopeCheck | null {
    const row = this.db.prepare<{ kind: string | null; scope: string | null }>(SCOPE_SQL).get();
    if (row?.kind !== "api") return null;
    return scopeCheck(parseRecordedScope(row.scope));
  }
}

/** The same checks for a query parsed before (server/list/caches.ts keeps parsed queries). */
export function assertAnswerable(
  q: { sources: readonly string[] | null; excludeAggregators: boolean },
  check: ScopeCheck,
): void {
  if (q.sources) check.sources(q.sources);
  if (q.excludeAggregators) check.excludeAggregators();
}

/** The checks of a replica whose last complete pass recorded `scope` (null: none has completed). */
export function scopeCheck(scope: RecordedScope | null): ScopeCheck {
  const recorded = scope?.sources ?? null;
  return {
    sources(tokens) {
      const unknown = tokens.filter((t) => !recorded?.includes(t));
      if (unknown.length === 0) return;
      throw new ApiError(
        "invalid_source",
        recorded
          ? `This server is a replica of another deployment and knows its events' sources only as ${named(recorded)}; ` +
              `${named(unknown)} cannot be answered exactly here. Send one of those, or ask the upstream.`
          : "This server is a replica of another deployment, whose events do not say their source; " +
              "`source` cannot be answered exactly here. Ask the upstream.",
      );
    },
    excludeAggregators() {
      if (scope?.aggregators === "known" || scope?.aggregators === "excluded") return;
      throw new ApiError(
        "invalid_exclude_aggregators",
        "This server is a replica of another deployment that does not know which of its events come from aggregators; " +
          "`exclude_aggregators=true` cannot be answered exactly here (its operator can sync with --aggregators). Ask the upstream.",
      );
    },
  };
}
