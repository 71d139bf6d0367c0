/**
 * What is known of an answered request (docs/operations.md, Logs and metrics): one record per
 * request, handed to the request log, the metrics and test mode's journal (server/requests.ts).
 * Nothing in it can hold a key: the path has no query string, and the query, which only the
 * journal shows, has its credential-like values replaced (`redactQuery`).
 */

export interface RequestRecord {
  /** When the answer was ready, wall-clock ms. */
  readonly time: number;
  readonly requestId: string;
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  /** The query string as sent, without its "?" ("" when none). Shown only by the journal, redacted. */
  readonly query: string;
  readonly status: number;
  /** The error code of an error answer, else null. */
  readonly code: string | null;
  /** The account and key the request authenticated as, when it got that far; else null. */
  readonly accountId: number | null;
  readonly keyId: number | null;
  /** Events delivered in the answer. */
  readonly rows: number;
  readonly durationMs: number;
  /** The route's path pattern (`/events/:id`), "unmatched" for a path no route takes: the metrics' label. */
  readonly route: string;
}

/** The path of a request target or an absolute URL, without its query string. */
export function pathOf(target: string): string {
  let start = 0;
  if (target.charCodeAt(0) !== 47 /* "/" */) {
    const scheme = target.indexOf("//");
    start = scheme < 0 ? 0 : target.indexOf("/", scheme + 2);
    if (start < 0) return "/";
  }
  const q = target.indexOf("?", start);
  return q < 0 ? (start === 0 ? target : target.slice(start)) : target.slice(start, q);
}

const KEY_SHAPE = /mq_(live|builder|legacy)_[A-Za-z0-9]+/g;

/** A path with anything shaped like an API key masked (a client may put one anywhere). */
export function redactPath(path: string): string {
  return path.includes("mq_") ? path.replace(KEY_SHAPE, "mq_$1_[redacted]") : path;
}

/** Parameter names whose values may be credentials. */
const SECRET_NAME = /key|token|password|passwd|secret|session|csrf|auth|signature/i;

/**
 * The query string with the value of every parameter named like a credential replaced by
 * `[redacted]`, and key-shaped values masked wherever they are.
 */
export function redactQuery(query: string): string {
  if (query === "") return "";
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return redactPath(pair);
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replaceAll("+", " "));
      } catch {
        // a malformed escape: judged as sent
      }
      return SECRET_NAME.test(name) ? `${pair.slice(0, eq)}=[redacted]` : redactPath(pair);
    })
    .join("&");
}
