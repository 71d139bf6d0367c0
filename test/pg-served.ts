/**
 * What a replica serves, for comparing two replicas through the API rather than their files:
 * every event in a wide window, page by page, as an enterprise key sees it, and the replica's
 * rows with the columns that do not depend on how they arrived (seq numbers do).
 */
import type { Db } from "../db/driver.ts";

const WINDOW = "starts_after=2026-06-01&starts_before=2028-06-01";

/** Every page of /v1/events over the whole window, from an app on the replica file at `dbPath`. */
export async function servedPages(dbPath: string, extra = ""): Promise<unknown[]> {
  const { createApp } = await import("../server/app.ts");
  const { createContext } = await import("../server/context.ts");
  const { resolveConfig } = await import("../server/config.ts");
  const baseUrl = "http://marquee.test";
  const ctx = await createContext(
    resolveConfig({ dbPath, testMode: true, baseUrl, secret: "same-secret-for-both" }, {}),
  );
  try {
    const app = createApp(ctx);
    const call = async (path: string, init?: RequestInit) => {
      const res = await app.request(new URL(path, baseUrl).href, init);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const post = (path: string, body: unknown) =>
      call(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    await post("/_test/clock", { set: "2026-12-01T00:00:00Z" });
    const { body: account } = await post("/_test/accounts", {
      email: `cmp-${Date.now()}@example.com`,
      plan: "enterprise",
      verified: true,
      // A negotiated rate big enough to walk every page at once.
      rateSustained: 1_000_000,
      rateBurst: 1_000_000,
    });
    const { body: issued } = await post(`/_test/accounts/${account.id}/keys`, { kind: "live" });
    const headers = { authorization: `Bearer ${issued.key}` };
    const pages: unknown[] = [];
    let cursor: string | null = null;
    do {
      const { status, body } = await call(
        `/v1/events?${WINDOW}&limit=100${extra}${cursor ? `&cursor=${cursor}` : ""}`,
        { headers },
      );
      if (status !== 200) throw new Error(`page ${pages.length}: ${status} ${JSON.stringify(body)}`);
      pages.push(body.data);
      cursor = (body.page as { nextCursor: string | null }).nextCursor;
    } while (cursor);
    return pages;
  } finally {
    ctx.close();
  }
}

/** Live rows without their seq, ordered by id. */
export function liveRows(db: Db): { venues: unknown[]; events: unknown[] } {
  const strip = (rows: Record<string, unknown>[]) => rows.map(({ seq: _seq, ...rest }) => rest);
  return {
    venues: strip(db.prepare<Record<string, unknown>>("SELECT * FROM venues ORDER BY id").all()),
    events: strip(db.prepare<Record<string, unknown>>("SELECT * FROM events ORDER BY id").all()),
  };
}
