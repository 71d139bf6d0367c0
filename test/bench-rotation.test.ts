/**
 * Rotated keys in a bench measured in slices (test/bench/rotate-keys.lua, wrk.ts `slice`): each
 * wrk thread continues its own rotation where the previous slice left it. Threads send unequal
 * shares, so starting both at the mean handed some keys out twice (handoff accounts then met
 * their 10-a-minute limit). A real wrk against a local server whose answers for the second
 * thread's keys are slow, so the first thread sends far more.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOAD } from "./bench/lib/config.ts";
import { slice } from "./bench/lib/wrk.ts";

const KEYS = 100_000;
let dir: string;
let server: Server;
let url: string;
const seen = new Map<string, number>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "marquee-rotation-"));
  writeFileSync(join(dir, "keys.txt"), `${Array.from({ length: KEYS }, (_, i) => `k${i}`).join("\n")}\n`);
  server = createServer((req, res) => {
    const key = (req.headers.authorization ?? "").slice("Bearer ".length);
    seen.set(key, (seen.get(key) ?? 0) + 1);
    // Thread 2 takes the odd keys (every second line): its answers come late.
    const slow = Number(key.slice(1)) % 2 === 1;
    setTimeout(() => res.end("ok"), slow ? 20 : 0);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("rotated keys across slices", () => {
  it("continues each thread's rotation where the last slice stopped, so no key is sent twice", async () => {
    expect(LOAD.threads).toBe(2);
    const spec = { url, keysFile: join(dir, "keys.txt") };
    const first = await slice(spec, 1);
    expect(first.places).toMatch(/^\d+,\d+$/);
    const [fast, slow] = first.places!.split(",").map(Number);
    // The premise: the threads' shares differ a lot (the mean would restart the first far back).
    expect(fast).toBeGreaterThan(2 * slow);

    const second = await slice({ ...spec, startAt: first.places }, 1);
    const [fast2, slow2] = second.places!.split(",").map(Number);
    expect(fast2).toBeGreaterThan(fast);
    expect(slow2).toBeGreaterThan(slow);
    expect(fast2 + slow2).toBeLessThan(KEYS);

    const twice = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
    expect(twice).toEqual([]);
    // Every key the server saw lies within its thread's rotation so far.
    for (const key of seen.keys()) {
      const i = Number(key.slice(1));
      expect(Math.floor(i / 2)).toBeLessThan(i % 2 === 0 ? fast2 : slow2);
    }
    // Answered requests, plus those still in flight when a slice ended (sent, never answered to wrk).
    expect(seen.size).toBeGreaterThanOrEqual(first.requests + second.requests);
    expect(seen.size).toBeLessThanOrEqual(fast2 + slow2);
  });
});
