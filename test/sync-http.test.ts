/**
 * An http(s) NDJSON source (`sync --from https://…`): applied while the response is still
 * arriving (streamed, not buffered whole), resumed from the watermark by a rerun, resumed from a
 * byte offset with a Range request, and re-polled by `--follow`.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openReplica, readWatermark } from "../db/replica.ts";
import { displaySource, openSource } from "../sync/source.ts";
import { syncFrom } from "../sync/sync-from.ts";

const venue = (seq: number) =>
  `${JSON.stringify({
    type: "venue",
    seq,
    venue: {
      id: seq,
      name: `V${seq}`,
      city: "Austin",
      state: "TX",
      timezone: null,
      latitude: null,
      longitude: null,
      geocodePrecision: null,
      visible: true,
    },
  })}\n`;

let dir: string;
let server: Server;
let base: string;
/** What /records.ndjson holds; /slow.ndjson sends its first half, then waits for `release`. */
let body = "";
let release: () => void = () => {};
const ranges: string[] = [];
const authorizations: Array<string | undefined> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-http-"));
  server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    if (req.url === "/slow.ndjson") {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(body.slice(0, body.length / 2));
      release = () => res.end(body.slice(body.length / 2));
      return;
    }
    if (req.url !== "/records.ndjson") return void res.writeHead(404).end();
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    if (range) {
      ranges.push(req.headers.range!);
      const from = Number(range[1]);
      if (from >= Buffer.byteLength(body)) return void res.writeHead(416).end();
      return void res.writeHead(206, { "content-type": "application/x-ndjson" }).end(Buffer.from(body).subarray(from));
    }
    res.writeHead(200, { "content-type": "application/x-ndjson" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

it("applies records while the response is still arriving", async () => {
  body = Array.from({ length: 40 }, (_, i) => venue(i + 1)).join("");
  const db = await openReplica(join(dir, "slow.db"));
  const run = syncFrom(db, openSource(`${base}/slow.ndjson`), { batchSize: 5 });
  const deadline = Date.now() + 5000;
  while (readWatermark(db) < 15 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(readWatermark(db)).toBeGreaterThanOrEqual(15); // half the stream applied, the rest not sent yet
  release();
  const summary = await run;
  expect(summary.applied).toBe(40);
  expect(readWatermark(db)).toBe(40);
  db.close();
});

it("a rerun skips what is applied; a start offset asks for the rest with Range; --follow polls again", async () => {
  body = Array.from({ length: 10 }, (_, i) => venue(i + 1)).join("");
  const db = await openReplica(join(dir, "resume.db"));
  const first = await syncFrom(db, openSource(`${base}/records.ndjson`));
  expect(first.applied).toBe(10);
  body += venue(11) + venue(12);
  const again = await syncFrom(db, openSource(`${base}/records.ndjson`));
  expect({ applied: again.applied, skipped: again.skipped }).toEqual({ applied: 2, skipped: 10 });

  body += venue(13);
  const resumed = await syncFrom(db, openSource(`${base}/records.ndjson`, { start: again.position }));
  expect({ applied: resumed.applied, skipped: resumed.skipped }).toEqual({ applied: 1, skipped: 0 });
  expect(ranges).toEqual([`bytes=${again.position.offset}-`]);

  const controller = new AbortController();
  const following = syncFrom(
    db,
    openSource(`${base}/records.ndjson`, { follow: true, signal: controller.signal, start: resumed.position }),
    {
      snapshotEveryMs: 0,
    },
  );
  await new Promise((r) => setTimeout(r, 300));
  body += venue(14) + venue(15);
  const deadline = Date.now() + 10_000;
  while (readWatermark(db) < 15 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  controller.abort();
  const followed = await following;
  expect(followed.applied).toBe(2);
  expect(readWatermark(db)).toBe(15);
  db.close();
}, 20_000);

it("a missing resource is one clear error", async () => {
  const db = await openReplica(join(dir, "missing.db"));
  await expect(syncFrom(db, openSource(`${base}/nope.ndjson`))).rejects.toThrow(
    `GET ${base}/nope.ndjson answered 404 Not Found; check the URL`,
  );
  db.close();
});

it("sends a URL's credentials as Basic authorization and never shows them or its query string", async () => {
  const db = await openReplica(join(dir, "secret.db"));
  const host = base.replace("http://", "");
  const url = `http://reader:hunter2@${host}/nope.ndjson?token=s3cret`;
  const failure = await syncFrom(db, openSource(url)).catch((err: Error) => err);
  expect((failure as Error).message).toBe(`GET ${base}/nope.ndjson?… answered 404 Not Found; check the URL`);
  expect(authorizations.at(-1)).toBe(`Basic ${Buffer.from("reader:hunter2").toString("base64")}`);
  const refused = await syncFrom(db, openSource("http://reader:hunter2@127.0.0.1:1/x.ndjson")).catch((e: Error) => e);
  expect((refused as Error).message).toMatch(/^cannot fetch http:\/\/127\.0\.0\.1:1\/x\.ndjson \(/);
  expect((refused as Error).message).not.toMatch(/hunter2/);
  expect(openSource(url).name).toBe(`${base}/nope.ndjson?…`);
  expect(displaySource(url)).not.toMatch(/hunter2|s3cret/);
  expect(displaySource("./data/records.ndjson")).toBe("./data/records.ndjson");
  await expect(syncFrom(db, openSource("http://a b/x.ndjson"))).rejects.toThrow(
    "cannot fetch (an unparsable URL) (not a valid URL); check the URL",
  );
  db.close();
});
