/**
 * The URL of `sync --from-api` and `serve --sync-from-api` as the scope a replica follows
 * (docs/upstream-records.md, A replica of another deployment). Its filters are checked here by
 * the list path's own rules (server/list/parse.ts), so the replica never sends a request the
 * upstream would refuse as malformed, and a typo is caught before anything is sent: an unknown
 * parameter, dates, a page size or a cursor (the pass chooses those), or a key in the URL are
 * refused with one line.
 */

import type { ApiScope } from "../sync/api/scope.ts";
import { UsageError } from "./cli/args.ts";
import { isApiError } from "./errors.ts";
import { assertKeysetPagination, parseListParams } from "./list/parse.ts";
import { FINGERPRINTED_PARAMS } from "./params.ts";
import { isGeoRequest } from "./params-geo.ts";

/** Filters a scope may name: every filter of the list endpoint but the dates, which each pass chooses. */
const SCOPE_FILTERS: readonly string[] = FINGERPRINTED_PARAMS.filter(
  (p) => p !== "starts_after" && p !== "starts_before",
);
const PASS_PARAMS = ["starts_after", "starts_before", "limit", "cursor"];

export function parseApiScope(raw: string): ApiScope {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(
      "--from-api: not a URL; give the upstream's list endpoint, e.g. https://HOST/v1/events?state=NY",
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new UsageError(`--from-api: ${url.protocol} is not http(s); give https://HOST/v1/events?FILTERS`);
  if (url.username || url.password)
    throw new UsageError(
      "--from-api: the URL holds credentials; the key goes in MARQUEE_UPSTREAM_KEY or --upstream-key-file, never in the URL",
    );
  if (!/\/v1\/events$/.test(url.pathname))
    throw new UsageError(`--from-api: ${url.pathname} is not the list endpoint; give https://HOST/v1/events?FILTERS`);
  const query = url.searchParams;
  try {
    assertKeysetPagination(query);
  } catch (err) {
    throw new UsageError(`--from-api: ${(err as Error).message}`);
  }
  for (const name of new Set(query.keys())) {
    if (PASS_PARAMS.includes(name))
      throw new UsageError(
        `--from-api: leave \`${name}\` out of the URL; each pass chooses dates, page sizes and cursors`,
      );
    if (!SCOPE_FILTERS.includes(name))
      throw new UsageError(
        `--from-api: \`${name}\` is not a filter of the list endpoint (filters: ${SCOPE_FILTERS.join(", ")})`,
      );
  }
  let parsed: ReturnType<typeof parseListParams>;
  try {
    parsed = parseListParams(query, "");
  } catch (err) {
    if (!isApiError(err)) throw err;
    throw new UsageError(`--from-api: the upstream would refuse these filters: ${err.code}: ${err.message}`);
  }
  if (parsed.cityConflict) throw new UsageError("--from-api: `city` names two cities; a venue is in one");
  url.hash = "";
  return {
    endpoint: `${url.origin}${url.pathname}`,
    filters: [...query.entries()].filter(([name]) => name !== "source"),
    sources: parsed.sources,
    geo: isGeoRequest(query),
    excludesAggregators: parsed.excludeAggregators,
    display: url.href,
  };
}
