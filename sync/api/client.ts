/**
 * The upstream's list endpoint as a careful client reads it (docs/upstream-records.md, A replica
 * of another deployment, Manners): one GET at a time with the key as a bearer token, paced by
 * `X-RateLimit-Remaining`/`-Reset` before a request and by `Retry-After` after every 429 and 503,
 * a 500 or a lost connection retried a few times, and a row budget (or trial allowance) never
 * spent below its reserve. The key goes into the Authorization header and nowhere else: no
 * message, error or log line here holds it.
 */
import { API_SYNC } from "../../db/contract.ts";
import { sleep } from "../source-lines.ts";
import { LookaheadRefusal, PassCutShort, UpstreamRefusal } from "./errors.ts";

/** One page as the upstream delivered it; the events are checked where they become records. */
export interface DeliveredPage {
  events: unknown[];
  nextCursor: string | null;
  hasMore: boolean;
}

export interface ClientStats {
  requests: number;
  pages: number;
  /** Rows delivered: what the account's allowance was charged. */
  rows: number;
  /** 429s answered `rate_limited` or `trial_capacity_reserved`, each waited out. */
  rateLimited: number;
}

export interface ClientOptions {
  endpoint: string;
  key: string;
  signal?: AbortSignal;
  /** Share of the row budget (or trial allowance) to leave unspent, 0..1. */
  reserve: number;
  /** A line worth telling the operator (a wait, a retry); never holds the key. */
  notice?: (line: string) => void;
  fetch?: typeof fetch;
}

/** The budget a pass spends from: the first figures it saw fix the reserve. */
interface Budget {
  remaining: number;
  reserve: number;
  trial: boolean;
}

const header = (res: Response, name: string): number | null => {
  const raw = res.headers.get(name);
  return raw !== null && /^\d+$/.test(raw.trim()) ? Number(raw) : null;
};

export class UpstreamClient {
  readonly stats: ClientStats = { requests: 0, pages: 0, rows: 0, rateLimited: 0 };
  /** Set by the first 200 that said so (X-DataApi-Access: trial): pages of 25. */
  trial = false;
  private answered = false;
  private budget: Budget | null = null;
  private rate: { remaining: number; resetMs: number } | null = null;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.fetch = options.fetch ?? fetch;
  }

  /**
   * The `limit` of the next page: one row until a first answer has shown the budget (so a budget
   * near its end is not overspent by the first page), then a full page, less when only that much
   * is left above the reserve. Throws when nothing is.
   */
  nextLimit(): number {
    if (!this.answered) return 1;
    const page = this.trial ? API_SYNC.trialPageLimit : API_SYNC.pageLimit;
    if (!this.budget) return page;
    const spendable = this.budget.remaining - this.budget.reserve;
    if (spendable < 1) {
      const what = this.budget.trial ? "the trial allowance" : "the row budget";
      throw new PassCutShort(
        "budget",
        `${what} is down to its reserve (${this.budget.remaining} rows left, ${this.budget.reserve} kept unspent)`,
      );
    }
    return Math.min(page, spendable);
  }

  /** One page: retried, paced and waited for until it is delivered, refused or the pass is cut short. */
  async get(query: URLSearchParams, geo: boolean): Promise<DeliveredPage> {
    const url = `${this.options.endpoint}?${query}`;
    let errors = 0;
    let unavailable = 0;
    for (;;) {
      await this.paceRate(geo ? 5 : 1);
      this.stats.requests++;
      let res: Response;
      try {
        res = await this.fetch(url, {
          headers: { authorization: `Bearer ${this.options.key}`, accept: "application/json" },
          signal: this.options.signal,
          redirect: "error",
        });
      } catch (err) {
        this.assertNotStopped();
        errors++;
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
        await this.retryOrStop(errors, `cannot reach ${this.options.endpoint} (${cause})`);
        continue;
      }
      this.readRate(res);
      if (res.status === 200) return this.delivered(res);
      const { code, message } = await readError(res);
      const retryAfterMs = Math.max(1, header(res, "retry-after") ?? 1) * 1000;
      if (res.status === 429 && code === "row_budget_exhausted")
        throw new PassCutShort("budget", `the upstream's row budget is spent (429 ${code}: ${message})`);
      if (res.status === 429) {
        this.stats.rateLimited++;
        this.options.notice?.(`upstream ${code}; waiting ${retryAfterMs / 1000} s (Retry-After)`);
        await this.wait(retryAfterMs);
        this.rate = null; // Retry-After said when the request fits: no second wait for the bucket
        continue;
      }
      if (res.status === 503) {
        if (++unavailable >= API_SYNC.unavailableAttempts)
          throw new PassCutShort("error", `the upstream answered 503 ${code} ${unavailable} times: ${message}`);
        this.options.notice?.(`upstream 503 ${code}; retrying in ${retryAfterMs / 1000} s (Retry-After)`);
        await this.wait(retryAfterMs);
        continue;
      }
      if (res.status >= 500) {
        errors++;
        await this.retryOrStop(errors, `the upstream answered ${res.status} ${code}: ${message}`);
        continue;
      }
      if (res.status === 403 && code === "lookahead_not_in_plan") throw new LookaheadRefusal(message);
      throw new UpstreamRefusal(res.status, code, message);
    }
  }

  private async delivered(res: Response): Promise<DeliveredPage> {
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      this.assertNotStopped();
      throw new PassCutShort(
        "error",
        `the upstream answered 200 with a body that is not JSON (${this.options.endpoint})`,
      );
    }
    const page = readPage(body);
    if (!page) throw new PassCutShort("error", "the upstream answered 200 without a page of events ({data, page})");
    this.answered = true;
    this.stats.pages++;
    this.stats.rows += page.events.length;
    this.readBudget(res, page.events.length);
    return page;
  }

  /** Row budget or trial allowance, from a 200; the first figures seen fix the reserve (docs/upstream-records.md, Manners). */
  private readBudget(res: Response, delivered: number): void {
    if (res.headers.get("x-dataapi-access") === "trial") this.trial = true;
    const trialLeft = header(res, "x-trial-rowbudget-remaining");
    const budgetLeft = header(res, "x-rowbudget-remaining");
    const remaining = trialLeft ?? budgetLeft;
    if (remaining === null) return;
    if (!this.budget) {
      // The trial keeps a share of its whole allowance; a rolling budget a share of what was
      // left when the pass began (this page's rows included).
      const base = trialLeft !== null ? (header(res, "x-trial-rowbudget-limit") ?? remaining) : remaining + delivered;
      this.budget = { remaining, reserve: Math.ceil(this.options.reserve * base), trial: trialLeft !== null };
    }
    this.budget.remaining = remaining;
  }

  private readRate(res: Response): void {
    const remaining = header(res, "x-ratelimit-remaining");
    const reset = header(res, "x-ratelimit-reset");
    if (remaining !== null && reset !== null) this.rate = { remaining, resetMs: reset * 1000 };
  }

  /**
   * Before a request: with fewer units left than it costs, waits until the bucket is full again
   * (`X-RateLimit-Reset`, read against this machine's clock, and at most API_SYNC.maxResetWaitMs
   * in case the clocks disagree; a 429's Retry-After then says the rest).
   */
  private async paceRate(cost: number): Promise<void> {
    this.assertNotStopped();
    if (!this.rate || this.rate.remaining >= cost) return;
    const ms = Math.min(API_SYNC.maxResetWaitMs, this.rate.resetMs - Date.now());
    this.rate = null;
    if (ms > 0) await this.wait(ms);
  }

  private async retryOrStop(attempt: number, what: string): Promise<void> {
    if (attempt >= API_SYNC.errorAttempts)
      throw new PassCutShort("error", `${what}; gave up after ${attempt} attempts`);
    const ms = API_SYNC.errorBackoffMs * 2 ** (attempt - 1);
    this.options.notice?.(`${what}; retrying in ${ms / 1000} s`);
    await this.wait(ms);
  }

  private async wait(ms: number): Promise<void> {
    await sleep(ms, this.options.signal);
    this.assertNotStopped();
  }

  private assertNotStopped(): void {
    if (this.options.signal?.aborted) throw new PassCutShort("signal", "stopped by a signal");
  }
}

function readPage(body: unknown): DeliveredPage | null {
  const b = body as { data?: unknown; page?: { nextCursor?: unknown; hasMore?: unknown } } | null;
  if (!b || !Array.isArray(b.data) || !b.page || typeof b.page.hasMore !== "boolean") return null;
  const cursor = b.page.nextCursor;
  if (cursor !== null && typeof cursor !== "string") return null;
  if (b.page.hasMore && cursor === null) return null;
  return { events: b.data, nextCursor: cursor, hasMore: b.page.hasMore };
}

/** The spec's error envelope, or what can be said of an answer without one. */
async function readError(res: Response): Promise<{ code: string; message: string }> {
  let text = "";
  try {
    text = await res.text();
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string")
      return { code: body.error.code, message: String(body.error.message ?? "").replace(/\s+/g, " ") };
  } catch {
    // not the envelope
  }
  return { code: res.statusText || "error", message: `not a Live Events Data Service answer (${res.status})` };
}
