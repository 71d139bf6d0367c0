/**
 * Runs every scenario against one server, or two side by side. Marquee targets get real keys: the bench account for
 * list scenarios, and freshly created trial or handoff accounts, enough that no key exceeds
 * its allowance during the run (docs/api.md, Plans and access), rotated by test/bench/rotate-keys.lua.
 * Mock targets (ceiling, Prism) check no key, so one key serves for everything.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../../../db/driver.ts";
import { LOAD, ROTATION } from "./config.ts";
import { createKeys, RUN_DIR } from "./fixture.ts";
import { errorCode, request } from "./prepare.ts";
import type { Server } from "./proc.ts";
import type { Cell } from "./report.ts";
import type { Scenario } from "./scenarios.ts";
import type { TargetId } from "./targets.ts";
import { combine, type LoadSpec, measure, probe, type Slice, slice } from "./wrk.ts";

export interface TargetProgress {
  warmed: boolean;
  /** The target's default-page rate, which sizes the rotated key sets. */
  listRps: number;
}

/** Keys enough that `rps` for `seconds` uses each about `uses` times, split evenly over wrk's threads. */
function keysFor(rps: number, seconds: number, uses: number): number {
  return Math.max(LOAD.threads * 16, Math.ceil((rps * seconds) / uses / LOAD.threads) * LOAD.threads);
}

/**
 * Fresh accounts for a rotated-key scenario, sized from the scenario's own rate: a one-second
 * probe on a set sized for the (faster) default page, then enough keys that each serves about
 * `uses / ROTATION.rateMargin` requests over warm-up and measurement. Sizing from the default
 * page's rate alone would give each trial key three or four pages, so most measured requests
 * would be an account's first: not what a trial's 40 pages look like.
 */
async function rotatedKeys(
  run: { target: TargetId; ledger: Db },
  s: Scenario,
  spec: LoadSpec,
  progress: TargetProgress,
) {
  const { ledger, target } = run;
  const auth = s.auth as "trial" | "handoff";
  const uses = auth === "trial" ? ROTATION.usesPerTrialKey : ROTATION.usesPerHandoffKey;
  const probeRps = Math.max(progress.listRps, 5_000);
  const probeKeys = createKeys(
    ledger,
    auth,
    keysFor(probeRps * ROTATION.rateMargin, ROTATION.probeS, uses),
    `${target}-probe`,
  );
  const rate = (await probe({ ...spec, keysFile: probeKeys.file }, ROTATION.probeS)).rps;
  const seconds = LOAD.warmupS + LOAD.durationS;
  const count = keysFor(rate * ROTATION.rateMargin, seconds, uses);
  return { count, rate, file: createKeys(ledger, auth, count, target).file };
}

function singleKeyFile(key: string): string {
  const file = join(RUN_DIR, "single.keys");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return file;
}

/** One server being measured, with what carries over between its scenarios. */
export interface Side {
  target: TargetId;
  server: Server;
  progress: TargetProgress;
}

export interface MeasureContext {
  ledger: Db;
  benchKey: string;
  log: (s: string) => void;
  notes: string[];
}

/** A side ready to load one scenario: its wrk spec and, for rotated keys, how many there are. */
interface Ready {
  side: Side;
  spec: LoadSpec;
  keyCount: number;
  /** Requests sent through the rotated keys so far (warm-up included). */
  sent: number;
  /** Each wrk thread's place in its key rotation after the last slice (rotate-keys.lua). */
  places?: string;
  slices: Slice[];
}

/** Warms the target once, makes the scenario's keys, and checks it can serve the scenario at all. */
async function prepare(side: Side, s: Scenario, ctx: MeasureContext): Promise<Ready | { skipped: string }> {
  const { target, server, progress } = side;
  const { benchKey, log } = ctx;
  const mock = target === "ceiling" || target === "prism";
  if (!progress.warmed && s.auth === "bench" && s.method === "GET") {
    await measure({ url: server.baseUrl + s.path, key: benchKey }, LOAD.targetWarmupS);
    progress.warmed = true;
  }
  let keyCount = 0;
  const spec: LoadSpec = { url: server.baseUrl + s.path, method: s.method, body: s.body };
  if (s.auth === "bench" || (mock && s.method === "GET")) spec.key = benchKey;
  else if (mock) spec.keysFile = singleKeyFile(benchKey);
  else {
    const keys = await rotatedKeys({ target, ledger: ctx.ledger }, s, spec, progress);
    keyCount = keys.count;
    spec.keysFile = keys.file;
    log(
      `  ${s.id}: probe ${keys.rate.toFixed(0)} req/s on ${target} → ${keys.count.toLocaleString("en-US")} fresh ${s.auth} accounts`,
    );
  }
  // One plain request first: a target that cannot serve the scenario is reported, not loaded.
  if (!spec.keysFile || mock) {
    const answer = await request(server.baseUrl, s.method, s.path, spec.key ?? benchKey, s.body);
    if (answer.status >= 300) {
      log(`  ${s.id}: skipped, ${target} answers ${answer.status}`);
      return { skipped: `answers ${answer.status}${target === "prism" ? "" : ` ${errorCode(answer)}`}` };
    }
  }
  return { side, spec, keyCount, sent: 0, slices: [] };
}

/**
 * Measures `scenarios` on each side. Per scenario every side gets its warm-up, then the measured
 * time in LOAD.slices slices; with two sides the slices alternate A B B A A B B A (and the next
 * scenario starts with B), so a machine that slows down or speeds up for a few seconds weighs on
 * both sides of a ratio alike. A side's slices combine into one result (combine() in wrk.ts).
 */
export async function measureSides(
  sides: Side[],
  scenarios: Scenario[],
  ctx: MeasureContext,
): Promise<Map<TargetId, Record<string, Cell>>> {
  const cells = new Map<TargetId, Record<string, Cell>>(sides.map((side) => [side.target, {}]));
  const sliceS = LOAD.durationS / LOAD.slices;
  for (const [i, s] of scenarios.entries()) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    const ready: Ready[] = [];
    for (const side of order) {
      const r = await prepare(side, s, ctx);
      if ("skipped" in r) cells.get(side.target)![s.id] = r;
      else ready.push(r);
    }
    // Every slice continues each wrk thread's key rotation where it stopped (rotate-keys.lua).
    const next = async (r: Ready, seconds: number) => {
      const part = await slice({ ...r.spec, startAt: r.places }, seconds);
      r.sent += part.requests;
      r.places = part.places;
      return part;
    };
    for (const r of ready) if (LOAD.warmupS > 0) await next(r, LOAD.warmupS);
    for (let k = 0; k < LOAD.slices; k++) {
      for (const r of k % 2 === 0 ? ready : [...ready].reverse()) r.slices.push(await next(r, sliceS));
    }
    for (const r of ready) {
      const load = combine(r.slices);
      const { target, progress } = r.side;
      cells.get(target)![s.id] = { load };
      if (r.keyCount > 0) {
        const answers = Object.entries(load.statuses ?? {})
          .map(([status, n]) => `${n.toLocaleString("en-US")} × ${status}`)
          .join(", ");
        ctx.notes.push(
          `${s.title} on ${target}: keys rotated over ${r.keyCount.toLocaleString("en-US")} fresh ${s.auth} accounts, ` +
            `about ${(r.sent / r.keyCount).toFixed(0)} requests each with the warm-up; answers (warm-up excluded): ${answers || "none"}.`,
        );
      }
      if (s.id === "default-25") progress.listRps = load.rps;
      ctx.log(
        `  ${s.id.padEnd(12)} ${target.padEnd(8)} ${load.rps.toFixed(0).padStart(7)} req/s  p50 ${load.p50Ms.toFixed(2)} ms  p99 ${load.p99Ms.toFixed(2)} ms` +
          `  (slices ${r.slices.map((x) => x.rps.toFixed(0)).join(", ")})` +
          (load.non2xx || load.socketErrors ? `  (${load.non2xx} non-2xx, ${load.socketErrors} socket errors)` : "") +
          (load.statuses ? `  statuses ${JSON.stringify(load.statuses)}` : ""),
      );
    }
  }
  return cells;
}
