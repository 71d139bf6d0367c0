/**
 * `handle` for the test-mode routes (docs/api.md, Test mode): a write the ledger or the replica
 * cannot take (a full disk, an I/O error, a read-only file, a lock held too long) answers 503
 * `storage_unavailable` naming SQLite's cause, so a test that set up a broken disk on purpose
 * sees what failed instead of a bare 500.
 */
import { isStorageFailure, storageFailureCause } from "../../db/storage-failure.ts";
import { type H3Scope, handle, json, type Route, type RouteHandler } from "../handle.ts";

export function testHandle(run: Route<H3Scope>): RouteHandler<H3Scope> {
  return handle(async (scope) => {
    try {
      return await run(scope);
    } catch (err) {
      if (!isStorageFailure(err)) throw err;
      const message = `Storage could not take the change: ${storageFailureCause(err)}`;
      return json({ error: { code: "storage_unavailable", message } }, 503, { "retry-after": "1" });
    }
  });
}
