/**
 * Before any load: resolve the data-dependent scenario inputs against the running Marquee on Bun
 * and capture one real response per scenario. The captured bytes are what the ceiling replays,
 * and a scenario Marquee cannot answer with a success is reported, never measured.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HANDOFF_SELLERS } from "../../../db/contract.ts";
import type { Db } from "../../../db/driver.ts";
import { DATA } from "./config.ts";
import { RUN_DIR } from "./fixture.ts";
import { handoffCandidates, pickSourcePrefix, pickStateCity, type ResolvedInputs, type Scenario } from "./scenarios.ts";

export interface Captured {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: string;
}

export async function request(
  baseUrl: string,
  method: string,
  path: string,
  key: string,
  body?: string,
): Promise<Captured> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(baseUrl + path, { method, headers, body, redirect: "manual" });
  return {
    method,
    path,
    status: res.status,
    contentType: res.headers.get("content-type") ?? "application/octet-stream",
    body: await res.text(),
  };
}

/** `code` of an error envelope (list or handoff shape), for reporting why a request failed. */
export function errorCode(c: Captured): string {
  try {
    return (JSON.parse(c.body) as { error?: { code?: string } }).error?.code ?? c.body.slice(0, 80);
  } catch {
    return c.body.slice(0, 80);
  }
}

interface Page {
  page: { nextCursor: string | null; hasMore: boolean };
}

/** Walks the default query's pages to a real deep cursor. Returns it with the pages walked. */
export async function walkToDeepCursor(baseUrl: string, key: string): Promise<{ cursor: string; pages: number }> {
  let cursor: string | null = null;
  let pages = 0;
  while (pages < DATA.deepPages) {
    const r = await request(
      baseUrl,
      "GET",
      cursor ? `/v1/events?cursor=${encodeURIComponent(cursor)}` : "/v1/events",
      key,
    );
    if (r.status !== 200) throw new Error(`deep walk: page ${pages + 1} answered ${r.status} ${errorCode(r)}`);
    const page = JSON.parse(r.body) as Page;
    if (!page.page.nextCursor || !page.page.hasMore) break;
    cursor = page.page.nextCursor;
    pages++;
  }
  if (!cursor) throw new Error("deep walk: the default query has a single page");
  return { cursor: encodeURIComponent(cursor), pages };
}

/** The first candidate event for which a real handoff creation answers 201. */
export async function findHandoffEvent(baseUrl: string, replica: Db, key: string, notes: string[]): Promise<number> {
  const candidates = handoffCandidates(replica, HANDOFF_SELLERS, Date.now());
  let last = "no candidate events with a usable supported seller link";
  for (const id of candidates.slice(0, 5)) {
    const r = await request(baseUrl, "POST", "/v1/ticket-handoffs", key, JSON.stringify({ event_id: id }));
    if (r.status === 201) return id;
    last = `event ${id} answered ${r.status} ${errorCode(r)}`;
  }
  notes.push(`Handoff creation: no event accepted (${last}); the handoff scenario is not measured.`);
  return candidates[0] ?? 1;
}

export async function resolveInputs(
  baseUrl: string,
  replica: Db,
  benchKey: string,
  handoffKey: string,
  notes: string[],
): Promise<ResolvedInputs & { deepPages: number }> {
  const { state, city } = pickStateCity(replica);
  const sourcePrefix = pickSourcePrefix(replica);
  let deepCursor = "";
  let deepPages = 0;
  try {
    ({ cursor: deepCursor, pages: deepPages } = await walkToDeepCursor(baseUrl, benchKey));
    if (deepPages < DATA.deepPages)
      notes.push(`The default query ran out after ${deepPages} pages; the deep page is page ${deepPages + 1}.`);
  } catch (err) {
    notes.push(`Deep page: ${(err as Error).message}; not measured.`);
  }
  const handoffEventId = await findHandoffEvent(baseUrl, replica, handoffKey, notes);
  return { state, city, sourcePrefix, deepCursor, handoffEventId, deepPages };
}

/**
 * One real response per scenario from Marquee on Bun; writes the ceiling's answer file.
 * Returns the scenarios Marquee answered with a success; the rest are noted and skipped.
 */
export async function captureScenarios(
  baseUrl: string,
  scenarios: Scenario[],
  keyFor: (s: Scenario) => string,
  notes: string[],
): Promise<{ served: Scenario[]; failed: Map<string, string>; bodiesFile: string }> {
  const captured: Captured[] = [];
  const failed = new Map<string, string>();
  for (const s of scenarios) {
    if (s.id === "deep" && s.path.endsWith("cursor=")) {
      failed.set(s.id, "no deep cursor");
      continue;
    }
    const r = await request(baseUrl, s.method, s.path, keyFor(s), s.body);
    if (r.status === 200 || r.status === 201) captured.push(r);
    else {
      failed.set(s.id, `Marquee answers ${r.status} ${errorCode(r)}`);
      notes.push(`${s.title}: Marquee answered ${r.status} ${errorCode(r)}; not measured.`);
    }
  }
  const bodiesFile = join(RUN_DIR, "ceiling-bodies.json");
  writeFileSync(bodiesFile, JSON.stringify(captured));
  return { served: scenarios.filter((s) => !failed.has(s.id)), failed, bodiesFile };
}
