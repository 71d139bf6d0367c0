/**
 * Test mode's request journal (docs/api.md, Test mode): the last requests a server answered, for
 * a client's tests to read back what their code sent. Each server keeps its own (parallel
 * instances never share one). Requests to `/_test/*` are the test's own set-up, not the code
 * under test, and are left out. A journal entry has no body and no key: the query string's
 * credential-like values are replaced (server/request-record.ts `redactQuery`).
 */
import { type RequestRecord, redactPath, redactQuery } from "./request-record.ts";

export const JOURNAL = {
  /** Entries kept; older ones are dropped. */
  capacity: 1000,
} as const;

export interface JournalEntry {
  /** When the server answered, on its clock (the test clock when set), ISO 8601. */
  time: string;
  requestId: string;
  method: string;
  path: string;
  query: string;
  status: number;
  code: string | null;
  keyId: number | null;
  accountId: number | null;
  rows: number;
}

export class RequestJournal {
  /** A ring: `#next` is where the next entry goes once it is full. */
  readonly #entries: JournalEntry[] = [];
  #next = 0;

  constructor(private readonly now: () => number) {}

  add(r: RequestRecord): void {
    if (r.path.startsWith("/_test/")) return;
    const entry: JournalEntry = {
      time: new Date(this.now()).toISOString(),
      requestId: r.requestId,
      method: r.method,
      path: redactPath(r.path),
      query: redactQuery(r.query),
      status: r.status,
      code: r.code,
      keyId: r.keyId,
      accountId: r.accountId,
      rows: r.rows,
    };
    if (this.#entries.length < JOURNAL.capacity) this.#entries.push(entry);
    else {
      this.#entries[this.#next] = entry;
      this.#next = (this.#next + 1) % JOURNAL.capacity;
    }
  }

  /** The last `limit` entries, oldest first. */
  read(limit: number = JOURNAL.capacity): JournalEntry[] {
    const inOrder = [...this.#entries.slice(this.#next), ...this.#entries.slice(0, this.#next)];
    return limit >= inOrder.length ? inOrder : inOrder.slice(inOrder.length - limit);
  }

  clear(): void {
    this.#entries.length = 0;
    this.#next = 0;
  }
}
