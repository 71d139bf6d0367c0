/**
 * Runs every scenario against one server, or several side by side. Marquee targets get real keys, from their own
 * ledger (the SQLite file beside the replica, or the Redis ledger): the bench account for
 * list scenarios, and freshly created trial or handoff accounts, enough that no key exceeds
 * its allowance during the run (docs/api.md, Plans and access), rotated by test/bench/rotate-keys.lua.
 * Mock targets (ceiling, Prism) check no key, so one key serves for everything. A side that
 * says how to read its CPU time gets it per request too (lib/cpu.ts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LOAD, ROTATION } from "./config.ts";
import { type Accounts, RUN_DIR } from "./fixture.ts";
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
 * Fresh accounts for a rotated-key scenario, sized from the scenario's own rate: two one-second
 * probes on a set sized for the (faster) default page, then enough keys that each serves about
 * `uses / ROTATION.rateMargin[auth]` requests over warm-up and measurement. Sizing from the default
 * page's rate alone would give each trial key three or four pages, so most measured requests
 * would be an account's first: not what a trial's 40 pages look like. The rate is the second
 * probe's: in the first nearly every request is its account's first (a trial starts), dearer
 * than the pages after it, and on the Redis ledger the first probe measured under half the rate
 * of the measured run, so its keys ran out (402s) before the last slice.
 */
async function rotatedKeys(
  run: { target: TargetId; accounts: Accounts },
  s: Scenario,
  spec: LoadSpec,
  progress: TargetProgress,
) {
  const { accounts, target } = run;
  const auth = s.auth as "trial" | "handoff";
  const uses = auth === "trial" ? ROTATION.usesPerTrialKey : ROTATION.usesPerHandoffKey;
  const probeRps = Math.max(progress.listRps, 5_000);
  const probeKeys = await accounts.create(
    auth,
    keysFor(probeRps * ROTATION.rateMargin[auth], 2 * ROTATION.probeS, uses),
    `${target}-probe`,
  );
  const first = await slice({ ...spec, keysFile: probeKeys.file }, ROTATION.probeS);
  const rate = (await probe({ ...spec, keysFile: probeKeys.file, startAt: first.places }, ROTATION.probeS)).rps;
  const seconds = LOAD.warmupS + LOAD.durationS;
  const count = keysFor(rate * ROTATION.rateMargin[auth], seconds, uses);
  return { count, rate, file: (await accounts.create(auth, count, target)).file };
}

function singleKeyFile(key: string): string {
  const file = join(RUN_DIR, "single.keys");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return file;
}

/** CPU seconds used so far by the server's processes and, on the Redis ledger, by redis-server. */
export interface CpuReading {
  marqueeS: number;
  redisS?: number;
}

/** One server being measured, with what carries over between its scenarios. */
export interface Side {
  target: TargetId;
  server: Server;
  progress: TargetProgress;
  /** The ledger this server reads keys from, when not the context's (Marquee on the Redis ledger). */
  accounts?: Accounts;
  /** How to read its CPU time, to report CPU per request (lib/cpu.ts). */
  cpu?: () => CpuReading;
}

export interface MeasureContext {
  /** The SQLite ledger beside the replica (and the bench key mock targets are sent). */
  accounts: Accounts;
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
  /** CPU seconds used during the measured slices (warm-up excluded). */
  cpu: CpuReading;
}

/** Warms the target once, makes the scenario's keys, and checks it can serve the scenario at all. */
async function prepare(side: Side, s: Scenario, ctx: MeasureContext): Promise<Ready | { skipped: string }> {
  const { target, server, progress } = side;
  const { log } = ctx;
  const accounts = side.accounts ?? ctx.accounts;
  const { benchKey } = accounts;
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
    const keys = await rotatedKeys({ target, accounts }, s, spec, progress);
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
  return { side, spec, keyCount, sent: 0, slices: [], cpu: { marqueeS: 0 } };
}

/**
 * Measures `scenarios` on each side. Per scenario every side gets its warm-up, then the measured
 * time in LOAD.slices slices; the sides take turns slice by slice, forwards then backwards (two
 * sides: A B B A A B B A; four: A B C D D C B A …), and the next scenario starts from the other
 * end, so a machine that slows down or speeds up for a few seconds weighs on every side of a
 * ratio alike. A side's slices combine into one result (combine() in wrk.ts); its CPU time is
 * read just before and after each of its measured slices, while the other sides are idle.
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
    const measured = async (r: Ready) => {
      const before = r.side.cpu?.();
      r.slices.push(await next(r, sliceS));
      const after = r.side.cpu?.();
      if (before && after) {
        r.cpu.marqueeS += after.marqueeS - before.marqueeS;
        if (before.redisS !== undefined && after.redisS !== undefined)
          r.cpu.redisS = (r.cpu.redisS ?? 0) + after.redisS - before.redisS;
      }
    };
    for (let k = 0; k < LOAD.slices; k++) {
      for (const r of k % 2 === 0 ? ready : [...ready].reverse()) await measured(r);
    }
    for (const r of ready) {
      const load = combine(r.slices);
      const { target, progress } = r.side;
      const perRequestUs = (seconds: number) => (load.requests > 0 ? (seconds * 1e6) / load.requests : Number.NaN);
      cells.get(target)![s.id] = r.side.cpu
        ? {
            load,
            cpu: {
              marqueeUs: perRequestUs(r.cpu.marqueeS),
              ...(r.cpu.redisS !== undefined ? { redisUs: perRequestUs(r.cpu.redisS) } : {}),
            },
          }
        : { load };
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
          (load.statuses ? `  statuses ${JSON.stringify(load.statuses)}` : "") +
          cpuText(cells.get(target)![s.id]),
      );
    }
  }
  return cells;
}

function cpuText(cell: Cell): string {
  if (!("cpu" in cell) || !cell.cpu) return "";
  const { marqueeUs, redisUs } = cell.cpu;
  return `  CPU ${marqueeUs.toFixed(0)} µs/req${redisUs !== undefined ? ` + Redis ${redisUs.toFixed(0)} µs/req` : ""}`;
}
