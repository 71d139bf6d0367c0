/**
 * Test mode's request journal (docs/api.md, Test mode): `GET /_test/requests?limit=N` answers
 * the last requests the server answered, oldest first (at most 1,000 are kept);
 * `DELETE /_test/requests` empties it. The journal itself is server/request-journal.ts.
 */
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { json } from "../handle.ts";
import { JOURNAL } from "../request-journal.ts";
import type { RouteTable } from "../route-table.ts";
import { testHandle } from "./test-handle.ts";

export function testRequestRoutes(app: RouteTable, ctx: AppContext): void {
  const journal = ctx.requests.journal;
  if (!journal) return;
  // One route for both methods: any other method is the 404 every unknown method gets.
  app.all(
    "/_test/requests",
    testHandle(({ req, url }) => {
      if (req.method === "DELETE") {
        journal.clear();
        return json({ requests: [] });
      }
      if (req.method !== "GET") throw new ApiError("not_found");
      const raw = url.searchParams.get("limit");
      if (raw !== null && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > JOURNAL.capacity))
        return json(
          { error: { code: "invalid_request", message: `limit must be an integer from 1 to ${JOURNAL.capacity}` } },
          400,
        );
      return json({ requests: journal.read(raw === null ? JOURNAL.capacity : Number(raw)) }, 200, {
        "cache-control": "no-store",
      });
    }),
  );
}
