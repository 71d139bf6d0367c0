/**
 * Runs every scenario against one server. Marquee targets get real keys: the bench account for
 * list scenarios, and freshly created trial or handoff accounts, enough that no key exceeds
 * its allowance during the run (CONTRACT §6), rotated by test/bench/rotate-keys.lua.
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
import { measure, probe, type LoadSpec } from "./wrk.ts";

export interface TargetRun {
  target: TargetId;
  server: Server;
  scenarios: Scenario[];
  ledger: Db;
  benchKey: string;
  log: (s: string) => void;
  notes: string[];
  /** Carried between calls when a target's scenarios are measured one at a time (interleaved). */
  progress?: TargetProgress;
}

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
async function rotatedKeys(run: TargetRun, s: Scenario, spec: LoadSpec, progress: TargetProgress) {
  const { ledger, target } = run;
  const auth = s.auth as "trial" | "handoff";
  const uses = auth === "trial" ? ROTATION.usesPerTrialKey : ROTATION.usesPerHandoffKey;
  const probeRps = Math.max(progress.listRps, 5_000);
  const probeKeys = createKeys(ledger, auth, keysFor(probeRps * ROTATION.rateMargin, ROTATION.probeS, uses), `${target}-probe`);
  const rate = (await probe({ ...spec, keysFile: probeKeys.file }, ROTATION.probeS)).rps;
  const seconds = LOAD.warmupS + LOAD.durationS;
  const count = keysFor(rate * ROTATION.rateMargin, seconds, uses);
  return { count, rate, file: createKeys(ledger, auth, count, target).file };
}

function singleKeyFile(key: string): string {
  const file = join(RUN_DIR, "single.keys");
  writeFileSync(file, key + "\n", { mode: 0o600 });
  return file;
}

export async function measureTarget(run: TargetRun): Promise<Record<string, Cell>> {
  const { target, server, ledger, benchKey, log } = run;
  const mock = target === "ceiling" || target === "prism";
  const cells: Record<string, Cell> = {};
  const progress = run.progress ?? { warmed: false, listRps: 0 };
  const first = run.scenarios.find((s) => s.auth === "bench" && s.method === "GET");
  if (first && !progress.warmed) {
    await measure({ url: server.baseUrl + first.path, key: benchKey }, LOAD.targetWarmupS);
    progress.warmed = true;
  }
  for (const s of run.scenarios) {
    let keyCount = 0;
    const spec: LoadSpec = { url: server.baseUrl + s.path, method: s.method, body: s.body };
    if (s.auth === "bench" || (mock && s.method === "GET")) spec.key = benchKey;
    else if (mock) spec.keysFile = singleKeyFile(benchKey);
    else {
      const keys = await rotatedKeys(run, s, spec, progress);
      keyCount = keys.count;
      spec.keysFile = keys.file;
      log(`  ${s.id}: probe ${keys.rate.toFixed(0)} req/s → ${keys.count.toLocaleString("en-US")} fresh ${s.auth} accounts`);
    }
    // One plain request first: a target that cannot serve the scenario is reported, not loaded.
    const probeKey = spec.key ?? benchKey;
    if (!spec.keysFile || mock) {
      const probe = await request(server.baseUrl, s.method, s.path, probeKey, s.body);
      if (probe.status >= 300) {
        cells[s.id] = { skipped: `answers ${probe.status}${target === "prism" ? "" : ` ${errorCode(probe)}`}` };
        log(`  ${s.id}: skipped, ${target} answers ${probe.status}`);
        continue;
      }
    }
    const load = await measure(spec);
    cells[s.id] = { load };
    if (spec.keysFile && !mock) {
      const answers = Object.entries(load.statuses ?? {}).map(([status, n]) => `${n.toLocaleString("en-US")} × ${status}`).join(", ");
      const perKey = (load.requests + load.rps * LOAD.warmupS) / keyCount;
      run.notes.push(
        `${s.title} on ${target}: keys rotated over ${keyCount.toLocaleString("en-US")} fresh ${s.auth} accounts, ` +
          `about ${perKey.toFixed(0)} requests each with the warm-up; answers (warm-up excluded): ${answers || "none"}.`,
      );
    }
    if (s.id === "default-25") progress.listRps = load.rps;
    log(
      `  ${s.id.padEnd(12)} ${load.rps.toFixed(0).padStart(7)} req/s  p50 ${load.p50Ms.toFixed(2)} ms  p99 ${load.p99Ms.toFixed(2)} ms` +
        (load.non2xx || load.socketErrors ? `  (${load.non2xx} non-2xx, ${load.socketErrors} socket errors)` : "") +
        (load.statuses ? `  statuses ${JSON.stringify(load.statuses)}` : ""),
    );
  }
  return cells;
}
