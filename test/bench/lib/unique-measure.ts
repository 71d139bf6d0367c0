/**
 * The unique-traffic scenarios: Marquee on Bun, the ceiling and the straightforward peer
 * (test/bench/peer.ts) measured side by side, slice by slice, as measure.ts does for the
 * repeated-URL scenarios. Marquee and the peer each walk their own pass over the same lists of
 * paths (test/bench/lib/unique.ts), so neither sees a URL twice; the ceiling replays one
 * captured ~18 kB page for every scenario.
 */
import { LOAD } from "./config.ts";
import { groupCpuS } from "./cpu.ts";
import { type Server, watchMemory } from "./proc.ts";
import type { UniqueLists } from "./unique.ts";
import { combine, type LoadResult, type LoadSpec, type Slice, slice } from "./wrk.ts";

export interface UniqueScenario {
  id: string;
  title: string;
  geo: boolean;
  /** The peer answers this class too. */
  peer: boolean;
  /** A rotated list of paths, or the cursor walks. */
  source: { paths: string } | { walks: string; pages: number };
}

export type UniqueSide = "bun" | "ceiling" | "peer";

export interface UniqueCell {
  load: LoadResult;
  /** Requests sent after the list ran out (should be 0: then no URL repeated). */
  repeats: number;
  /**
   * CPU µs a request: utime + stime of the server's process group over its measured slices
   * (every thread, the JIT's and the collector's included; lib/cpu.ts), over the requests they served.
   */
  cpuUs: number;
  /**
   * Marquee's private memory (lib/proc.ts readMemory) at the end of the scenario and the highest
   * seen during it, warm-up included: which class of traffic makes the process grow.
   */
  privateMb?: { end: number; peak: number };
}

/** Pages of each cursor walk, for the bench and the stage profile (test/bench/walk-cursors.lua sends as many). */
export const WALK_PAGES = 40;

export function uniqueScenarios(lists: UniqueLists): UniqueScenario[] {
  const p = (id: string, title: string, file: string, geo: boolean, peer: boolean): UniqueScenario => ({
    id,
    title,
    geo,
    peer,
    source: { paths: file },
  });
  return [
    p("u-state", "state, each its own window", lists.paths.state, false, true),
    p("u-state-city", "state + city, each its own window", lists.paths["state-city"], false, true),
    p("u-source", "source (a source or its vendor), each its own window", lists.paths.source, false, false),
    p("u-circle", "circle of 1–25 miles around a venue's neighbourhood", lists.paths.circle, true, true),
    p("u-polygon", "polygon of 4–8 vertices, 6–34 miles across", lists.paths.polygon, true, false),
    {
      id: "u-walk",
      title: `cursor walks of ${WALK_PAGES} pages (a state, its own window)`,
      geo: false,
      peer: false,
      source: { walks: lists.walks, pages: WALK_PAGES },
    },
    p(
      "u-zipf",
      `mix of every class, Zipf over ${lists.zipf.queries.toLocaleString("en-US")} queries (${Math.round(100 * lists.zipf.repeatShare)} % repeats)`,
      lists.zipf.file,
      false,
      false,
    ),
  ];
}

interface Ready {
  side: UniqueSide;
  server: Server;
  spec: LoadSpec;
  places?: string;
  slices: Slice[];
  repeats: number;
  cpuS: number;
}

/**
 * Measures every scenario: warm-up (longer before the first), then LOAD.slices slices per side,
 * the sides' order turning slice by slice (A B C C B A …) so a slower stretch of the machine
 * weighs on every side.
 */
export async function measureUnique(
  servers: Record<UniqueSide, Server | null>,
  scenarios: UniqueScenario[],
  key: string,
  ceilingPath: string,
  log: (s: string) => void,
): Promise<Record<string, Partial<Record<UniqueSide, UniqueCell>>>> {
  const out: Record<string, Partial<Record<UniqueSide, UniqueCell>>> = {};
  const sliceS = LOAD.durationS / LOAD.slices;
  for (const [i, s] of scenarios.entries()) {
    const ready: Ready[] = [];
    for (const side of ["bun", "ceiling", "peer"] as const) {
      const server = servers[side];
      if (!server || (side === "peer" && !s.peer)) continue;
      const spec: LoadSpec =
        side === "ceiling"
          ? { url: server.baseUrl + ceilingPath, key }
          : "paths" in s.source
            ? { url: `${server.baseUrl}/`, key, pathsFile: s.source.paths }
            : { url: `${server.baseUrl}/`, key, walksFile: s.source.walks, walkPages: s.source.pages };
      ready.push({ side, server, spec, slices: [], repeats: 0, cpuS: 0 });
    }
    if (i % 2 === 1) ready.reverse();
    const memory = servers.bun ? watchMemory(servers.bun.child.pid!) : null;
    const next = async (r: Ready, seconds: number) => {
      const part = await slice({ ...r.spec, startAt: r.places }, seconds);
      r.places = part.places;
      r.repeats += part.wrapped ?? 0;
      return part;
    };
    // Before the first scenario each server also gets the repeated section's longer warm-up, on
    // the same list: a fresh process's JIT is not settled by one second (docs/perf-history.md, "Round 14").
    // The URLs it takes are spent: the measured requests are still ones no server has seen.
    if (i === 0) for (const r of ready) await next(r, LOAD.targetWarmupS);
    for (const r of ready) if (LOAD.warmupS > 0) await next(r, LOAD.warmupS);
    const measured = async (r: Ready) => {
      const before = groupCpuS(r.server.child.pid!);
      r.slices.push(await next(r, sliceS));
      r.cpuS += groupCpuS(r.server.child.pid!) - before;
    };
    for (let k = 0; k < LOAD.slices; k++) {
      for (const r of k % 2 === 0 ? ready : [...ready].reverse()) await measured(r);
    }
    const m = memory?.stop();
    const cells: Partial<Record<UniqueSide, UniqueCell>> = {};
    for (const r of ready) {
      const load = combine(r.slices);
      const cpuUs = load.requests > 0 ? (r.cpuS * 1e6) / load.requests : Number.NaN;
      const privateMb = r.side === "bun" && m ? { end: m.privateMb, peak: m.privatePeakMb } : undefined;
      cells[r.side] = { load, repeats: r.repeats, cpuUs, ...(privateMb ? { privateMb } : {}) };
      log(
        `  ${s.id.padEnd(13)} ${r.side.padEnd(8)} ${load.rps.toFixed(0).padStart(7)} req/s  p50 ${load.p50Ms.toFixed(2)} ms  p99 ${load.p99Ms.toFixed(2)} ms  CPU ${cpuUs.toFixed(0)} µs/req` +
          (privateMb ? `  private ${privateMb.end.toFixed(0)} MB (peak ${privateMb.peak.toFixed(0)})` : "") +
          (load.non2xx || load.socketErrors ? `  (${load.non2xx} non-2xx, ${load.socketErrors} socket errors)` : "") +
          (r.repeats ? `  (${r.repeats} requests after the list ran out)` : ""),
      );
    }
    out[s.id] = cells;
  }
  return out;
}
