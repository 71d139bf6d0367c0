#!/usr/bin/env bun
/**
 * How fast `marquee/testing` gives a test suite a server (docs/testing.md, "In a Node or Bun test suite"):
 * from the `startMarquee()` call to the first answered request, for an empty instance, for
 * `demoEvents: 5000`, and for 8 empty instances started together in one process. Targets: an
 * empty instance within 500 ms, 5,000 demo events within 2 s.
 *
 *   bun test/bench/start-times.ts     prints the times; exits 1 when a target is missed
 */
import { type StartOptions, startMarquee } from "../../testing/index.ts";

export const START_TARGETS = { emptyMs: 500, demo5000Ms: 2_000 } as const;
const RUNS = { empty: 5, demo5000: 3 } as const;

/** Milliseconds from the call until the instance has answered a request; stops it after. */
async function timeOneStart(options: StartOptions): Promise<number> {
  const started = performance.now();
  const m = await startMarquee(options);
  try {
    const res = await fetch(`${m.url}/healthz`);
    if (!res.ok) throw new Error(`healthz answered ${res.status}`);
    await res.arrayBuffer();
    return performance.now() - started;
  } finally {
    await m.stop();
  }
}

export async function measureStartTimes(): Promise<{ emptyMs: number[]; demo5000Ms: number[]; parallel8Ms: number }> {
  const emptyMs: number[] = [];
  for (let i = 0; i < RUNS.empty; i++) emptyMs.push(await timeOneStart({}));
  const demo5000Ms: number[] = [];
  for (let i = 0; i < RUNS.demo5000; i++) demo5000Ms.push(await timeOneStart({ demoEvents: 5000 }));
  const started = performance.now();
  await Promise.all(Array.from({ length: 8 }, () => timeOneStart({})));
  return { emptyMs, demo5000Ms, parallel8Ms: performance.now() - started };
}

/** The targets missed (an empty list when every run met them). */
export function missedStartTargets(t: Awaited<ReturnType<typeof measureStartTimes>>): string[] {
  const missed: string[] = [];
  const worstEmpty = Math.max(...t.emptyMs);
  const worstDemo = Math.max(...t.demo5000Ms);
  if (worstEmpty > START_TARGETS.emptyMs)
    missed.push(`empty start ${worstEmpty.toFixed(0)} ms > ${START_TARGETS.emptyMs} ms`);
  if (worstDemo > START_TARGETS.demo5000Ms)
    missed.push(`demoEvents 5000 ${worstDemo.toFixed(0)} ms > ${START_TARGETS.demo5000Ms} ms`);
  return missed;
}

if (import.meta.main) {
  const t = await measureStartTimes();
  const ms = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(", ");
  console.log(`startMarquee() to first answer (${typeof Bun === "undefined" ? "Node" : "Bun"} caller, server on Bun)`);
  console.log(`  empty           ${ms(t.emptyMs)} ms  (target ${START_TARGETS.emptyMs} ms)`);
  console.log(`  demoEvents 5000 ${ms(t.demo5000Ms)} ms  (target ${START_TARGETS.demo5000Ms} ms)`);
  console.log(`  8 in parallel   ${t.parallel8Ms.toFixed(0)} ms until all 8 had answered and stopped`);
  const missed = missedStartTargets(t);
  if (missed.length > 0) console.log(`MISSED: ${missed.join("; ")}`);
  process.exit(missed.length > 0 ? 1 : 0);
}
