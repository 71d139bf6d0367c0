/**
 * The one place an answered request is recorded (docs/operations.md, Logs and metrics). The
 * request wrapper (server/handle.ts) calls `record` once per answered request, whichever listener
 * took it; the record goes to the request log, the metrics (with an admin port) and test mode's
 * journal. A server that has none of them (a log level above info, no admin port, no test mode)
 * does nothing per request here.
 *
 * The record is one object per recorder, filled for each request and handed to the observers
 * synchronously: they read it during the call (the journal copies what it keeps), so a request
 * allocates nothing for it.
 */
import type { RequestRecorder, RequestScope } from "./handle.ts";
import type { Logger } from "./log.ts";
import type { RequestMetrics } from "./metrics.ts";
import type { RequestJournal } from "./request-journal.ts";
import { type RequestRecord, redactPath } from "./request-record.ts";

/** The record of the request being recorded: its fields, read from the scope once. */
class AnsweredRequest implements RequestRecord {
  time = 0;
  requestId = "";
  method = "";
  status = 0;
  code: string | null = null;
  accountId: number | null = null;
  keyId: number | null = null;
  rows = 0;
  durationMs = 0;
  route = "";
  scope: RequestScope | null = null;

  /** Read only by the log and the journal. */
  get path(): string {
    return this.scope!.path;
  }
  get query(): string {
    return this.scope!.search.slice(1);
  }
}

export class Requests implements RequestRecorder {
  readonly #record = new AnsweredRequest();
  /** Metrics or a journal: every request is recorded, whatever the log's level. */
  readonly #kept: boolean;

  constructor(
    readonly log: Logger,
    readonly metrics: RequestMetrics | null,
    readonly journal: RequestJournal | null,
  ) {
    this.#kept = metrics !== null || journal !== null;
  }

  record(scope: RequestScope, status: number, code: string | null, route: string): void {
    // The log's level may change while serving (SIGHUP), so it is asked each time.
    const logs = this.log.requests;
    if (!logs && !this.#kept) return;
    const r = this.#record;
    r.time = Date.now();
    r.durationMs = performance.now() - scope.startedMs;
    r.requestId = scope.requestId;
    r.method = scope.method;
    r.status = status;
    r.code = code;
    r.accountId = scope.accountId;
    r.keyId = scope.keyId;
    r.rows = scope.rows;
    r.route = route;
    r.scope = scope;
    try {
      if (logs) this.log.request(r);
      this.metrics?.observe(r);
      this.journal?.add(r);
    } finally {
      r.scope = null;
    }
  }

  /** An error no route expected: logged with the request's id, method and path (never its query or headers). */
  unexpected(scope: RequestScope, err: unknown): void {
    this.log.error("unexpected error", {
      requestId: scope.requestId,
      method: scope.method,
      path: redactPath(scope.path),
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
  }
}
