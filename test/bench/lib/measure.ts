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
import { measure, type LoadSpec } from "./wrk.ts";

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

/**
 * Keys needed so that `rps` sustained over warm-up and measurement uses each at most `uses`
 * times. Accounts are cheap to create, so the margin is wide: a trial or handoff request may
 * well be faster than the default page whose rate sizes the set.
 */
function keysNeeded(rps: number, uses: number): number {
  const requests = Math.max(rps * 3, 5_000) * (LOAD.warmupS + LOAD.durationS + 1);
  return Math.max(LOAD.threads * 16, Math.ceil(requests / uses / LOAD.threads) * LOAD.threads);
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
      const uses = s.auth === "trial" ? ROTATION.usesPerTrialKey : ROTATION.usesPerHandoffKey;
      const count = keysNeeded(progress.listRps, uses);
      keyCount = count;
      spec.keysFile = createKeys(ledger, s.auth, count, target).file;
      log(`  ${s.id}: ${count.toLocaleString("en-US")} ${s.auth} accounts, each key used at most ~${uses} times`);
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
      run.notes.push(`${s.title} on ${target}: keys rotated over ${keyCount.toLocaleString("en-US")} fresh ${s.auth} accounts; answers (warm-up excluded): ${answers || "none"}.`);
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
