/**
 * Turns one run's measurements into the tables and met/missed verdicts, printed and
 * written into test/bench/RESULTS.md between markers (the analysis written around them stays).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { StageRow } from "../list-stages.ts";
import type { CopyResult, PeerResult, StreamingResult } from "../postgres.ts";
import { START_TARGETS } from "../start-times.ts";
import { type StartupReport, startupTables, startupVerdicts } from "../startup.ts";
import { DATA, LOAD, PROJECTED_CORES, RESULTS_MD, TARGETS } from "./config.ts";
import type { Machine } from "./machine.ts";
import type { MemoryReading } from "./proc.ts";
import type { Scenario } from "./scenarios.ts";
import type { SyncThroughput, SyncUnderLoad } from "./sync-load.ts";
import { TARGET_TITLES, type TargetId } from "./targets.ts";
import type { UniqueCell, UniqueScenario, UniqueSide } from "./unique-measure.ts";
import type { LoadResult } from "./wrk.ts";

/** CPU microseconds per request served: the server's processes, and redis-server on the Redis ledger. */
export interface CpuPerRequest {
  marqueeUs: number;
  redisUs?: number;
}

export type Cell = { load: LoadResult; cpu?: CpuPerRequest } | { skipped: string };

export interface RunReport {
  machine: Machine;
  /** The bench's own redis-server for the Redis-ledger targets, when they ran. */
  redis?: { version: string };
  replica: { events: number; snapshotEvents: number; venues: number; reused: boolean; anchor: string };
  scenarios: Scenario[];
  cells: Record<string, Partial<Record<TargetId, Cell>>>;
  notes: string[];
  rss: Partial<Record<TargetId, MemoryReading>>;
  coldStartMs: number[];
  syncThroughput?: SyncThroughput | { skipped: string };
  syncUnderLoad?: (SyncUnderLoad & { idle: LoadResult }) | { skipped: string };
  /** Traffic no cache has seen: Marquee, the ceiling and the straightforward peer side by side. */
  unique?: {
    scenarios: UniqueScenario[];
    cells: Record<string, Partial<Record<UniqueSide, UniqueCell>>>;
    rss?: MemoryReading;
    ceilingPath: string;
  };
  /** Microseconds per stage of a new request (test/bench/list-stages.ts). */
  stages?: StageRow[];
  /** `startMarquee()` from marquee/testing: to its first answer, per run (test/bench/start-times.ts). */
  startTimes?: { emptyMs: number[]; demo5000Ms: number[]; parallel8Ms: number };
  /** The request log and the metrics, on and off (test/bench/observability.ts), as markdown. */
  observability?: string | { skipped: string };
  /** Start-up against the runtime's own, and what each import costs (test/bench/startup.ts). */
  startup?: StartupReport;
  /** The PostgreSQL upstream (test/bench/postgres.ts). */
  postgres?: { copy: CopyResult; streaming: StreamingResult; peer: PeerResult } | { skipped: string };
  /** The list path's size (test/bench/lib/list-path.ts). */
  listPath?: { files: number; lines: number };
  elapsedS: number;
}

interface Verdict {
  target: string;
  measured: string;
  met: boolean | null; // null: could not be measured
}

const BEGIN = "<!-- bench:results:begin -->";
const END = "<!-- bench:results:end -->";

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ms = (n: number) => (n < 10 ? fmt(n, 2) : fmt(n, 1));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const loadOf = (c: Cell | undefined) => (c && "load" in c ? c.load : undefined);

function cellText(c: Cell | undefined, withBytes = false): string[] {
  if (!c) return ["–", "–", "–"];
  if ("skipped" in c) return [c.skipped, "", ""];
  const l = c.load;
  const refused = l.statuses
    ? Object.entries(l.statuses)
        .filter(([s]) => Number(s) >= 300)
        .map(([s, n]) => `${fmt(n)} × ${s}`)
    : [];
  const flag =
    l.non2xx + l.socketErrors > 0
      ? ` (${refused.length ? refused.join(", ") : `${fmt(l.non2xx)} non-2xx`}${l.socketErrors ? `, ${fmt(l.socketErrors)} socket errors` : ""})`
      : "";
  const bytes = withBytes ? ` (${fmt(l.bytesPerAnswer / 1024, 1)} kB)` : "";
  return [fmt(l.rps) + bytes + flag, ms(l.p50Ms), ms(l.p99Ms)];
}

function scenarioTable(r: RunReport): string {
  const head =
    "| scenario | ceiling req/s (answer size) | Bun req/s | Bun p50 ms | Bun p99 ms | Bun / ceiling | Node req/s | Node p50 ms | Node p99 ms | Prism req/s (answer size) | Prism p50 ms | Prism p99 ms |\n" +
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|";
  const rows = r.scenarios.map((s) => {
    const c = r.cells[s.id] ?? {};
    const ceil = loadOf(c.ceiling);
    const bun = loadOf(c.bun);
    const share = ceil && bun ? `${fmt((100 * bun.rps) / ceil.rps)} %` : "–";
    return `| ${s.title} | ${cellText(c.ceiling, true)[0]} | ${cellText(c.bun).join(" | ")} | ${share} | ${cellText(c.node).join(" | ")} | ${cellText(c.prism, true).join(" | ")} |`;
  });
  return [head, ...rows].join("\n");
}

export function verdicts(r: RunReport): Verdict[] {
  const out: Verdict[] = [];
  const get = (id: string, t: TargetId) => loadOf(r.cells[id]?.[t]);
  const def = get("default-25", "bun");
  const defCeil = get("default-25", "ceiling");
  out.push({
    target: `default page: Bun ≥ ${TARGETS.defaultShareOfCeiling * 100} % of ceiling req/s`,
    measured: def && defCeil ? `${fmt((100 * def.rps) / defCeil.rps)} %` : "not measured",
    met: def && defCeil ? def.rps >= TARGETS.defaultShareOfCeiling * defCeil.rps : null,
  });
  out.push({
    target: `default page: Bun p99 < ${TARGETS.defaultP99Ms} ms`,
    measured: def ? `${ms(def.p99Ms)} ms` : "not measured",
    met: def ? def.p99Ms < TARGETS.defaultP99Ms : null,
  });
  for (const s of r.scenarios.filter((s) => s.list && s.id !== "default-25")) {
    const b = get(s.id, "bun");
    const c = get(s.id, "ceiling");
    out.push({
      target: `${s.title}: Bun ≥ ${TARGETS.listShareOfCeiling * 100} % of ceiling`,
      measured: b && c ? `${fmt((100 * b.rps) / c.rps)} %` : "not measured",
      met: b && c ? b.rps >= TARGETS.listShareOfCeiling * c.rps : null,
    });
  }
  const deep = get("deep", "bun");
  out.push({
    target: `deep page within ${TARGETS.deepVsFirst}x of the first page (req/s)`,
    measured: deep && def ? `${fmt(def.rps / deep.rps, 2)}x` : "not measured",
    met: deep && def ? def.rps / deep.rps <= TARGETS.deepVsFirst : null,
  });
  for (const s of r.scenarios.filter((s) => s.geo)) {
    const b = get(s.id, "bun");
    out.push({
      target: `${s.title}: Bun p50 < ${TARGETS.geoP50Ms} ms`,
      measured: b ? `${ms(b.p50Ms)} ms` : "not measured",
      met: b ? b.p50Ms < TARGETS.geoP50Ms : null,
    });
  }
  const vsPrism = r.scenarios.filter((s) => get(s.id, "prism") && get(s.id, "bun"));
  const behindPrism = vsPrism.filter((s) => get(s.id, "bun")!.rps <= get(s.id, "prism")!.rps).map((s) => s.id);
  out.push({
    target: "Marquee (Bun) ahead of Prism on every scenario Prism serves",
    measured: vsPrism.length
      ? `${vsPrism.length - behindPrism.length}/${vsPrism.length} ahead${behindPrism.length ? `; behind on ${behindPrism.join(", ")}` : ""}`
      : "Prism served no scenario",
    met: vsPrism.length ? behindPrism.length === 0 : null,
  });
  const both = r.scenarios.filter((s) => get(s.id, "bun") && get(s.id, "node"));
  const nodeAhead = both.filter((s) => get(s.id, "bun")!.rps <= get(s.id, "node")!.rps).map((s) => s.id);
  out.push({
    target: "Bun ahead of Node on every scenario",
    measured: both.length
      ? `${both.length - nodeAhead.length}/${both.length} ahead${nodeAhead.length ? `; behind on ${nodeAhead.join(", ")}` : ""}`
      : "not measured",
    met: both.length ? nodeAhead.length === 0 : null,
  });
  // Private memory under the unique traffic, which keeps the most; else after the repeated scenarios.
  const mem = r.unique?.rss ?? r.rss.bun;
  out.push({
    target: `Bun private memory while serving < ${TARGETS.rssMb} MB`,
    measured: mem ? memoryText(mem) : "not measured",
    met: mem ? mem.privatePeakMb < TARGETS.rssMb : null,
  });
  const cold = r.coldStartMs.length ? median(r.coldStartMs) : undefined;
  out.push({
    target: `cold start of dist/marquee serve < ${TARGETS.coldStartMs} ms`,
    measured: cold !== undefined ? `${fmt(cold)} ms (median of ${r.coldStartMs.length})` : "not measured",
    met: cold !== undefined ? cold < TARGETS.coldStartMs : null,
  });
  const st = r.syncThroughput && "recordsPerS" in r.syncThroughput ? r.syncThroughput : undefined;
  out.push({
    target: `sync ≥ ${fmt(TARGETS.syncRecordsPerS)} records/s`,
    measured: st ? `${fmt(st.recordsPerS)} records/s` : "not measured",
    met: st ? st.recordsPerS >= TARGETS.syncRecordsPerS : null,
  });
  const su = r.syncUnderLoad && "load" in r.syncUnderLoad ? r.syncUnderLoad : undefined;
  out.push({
    target: `default page p99 during a ${fmt(DATA.changeRecords)}-change sync ≤ ${TARGETS.syncP99Factor}x idle`,
    measured: su
      ? `${ms(su.load.p99Ms)} ms vs ${ms(su.idle.p99Ms)} ms idle (${fmt(su.load.p99Ms / su.idle.p99Ms, 2)}x)`
      : "not measured",
    met: su ? su.load.p99Ms <= TARGETS.syncP99Factor * su.idle.p99Ms : null,
  });
  out.push(...redisVerdicts(r));
  out.push(...uniqueVerdicts(r));
  const st2 = r.startTimes;
  out.push(
    {
      target: `startMarquee() empty instance answers within ${START_TARGETS.emptyMs} ms (every run)`,
      measured: st2 ? `${st2.emptyMs.map((x) => fmt(x)).join(", ")} ms` : "not measured",
      met: st2 ? Math.max(...st2.emptyMs) <= START_TARGETS.emptyMs : null,
    },
    {
      target: `startMarquee({ demoEvents: 5000 }) within ${fmt(START_TARGETS.demo5000Ms)} ms (every run)`,
      measured: st2 ? `${st2.demo5000Ms.map((x) => fmt(x)).join(", ")} ms` : "not measured",
      met: st2 ? Math.max(...st2.demo5000Ms) <= START_TARGETS.demo5000Ms : null,
    },
  );
  if (r.startup) out.push(...startupVerdicts(r.startup));
  const pg = r.postgres && "copy" in r.postgres ? r.postgres : undefined;
  out.push(
    {
      target: `PostgreSQL initial copy ≥ ${fmt(TARGETS.pgCopyRowsPerS)} rows/s`,
      measured: pg ? `${fmt(pg.copy.rowsPerS)} rows/s` : "not measured",
      met: pg ? pg.copy.rowsPerS >= TARGETS.pgCopyRowsPerS : null,
    },
    {
      target: `PostgreSQL commit to served: p99 < ${fmt(TARGETS.pgCommitToServedP99Ms)} ms at ${fmt(DATA.pgChangesPerS)} changes/s`,
      measured: pg
        ? `p50 ${fmt(pg.streaming.commitToServed.p50)} ms, p99 ${fmt(pg.streaming.commitToServed.p99)} ms (max lag ${fmt(pg.streaming.maxLagBytes)} bytes)`
        : "not measured",
      met: pg ? pg.streaming.commitToServed.p99 < TARGETS.pgCommitToServedP99Ms : null,
    },
    {
      target: `default page p99 during the PostgreSQL stream ≤ ${TARGETS.pgStreamP99Factor}x idle`,
      measured: pg
        ? `${ms(pg.streaming.duringStream.p99)} ms vs ${ms(pg.streaming.idle.p99)} ms idle (${fmt(pg.streaming.p99Ratio, 2)}x)`
        : "not measured",
      met: pg ? pg.streaming.p99Ratio <= TARGETS.pgStreamP99Factor : null,
    },
    {
      target: `default page: Marquee ≥ ${TARGETS.pgPeerFactor}x a server reading PostgreSQL directly`,
      measured: pg
        ? `${fmt(pg.peer.throughputRatio, 1)}x (${fmt(pg.peer.marquee.perS)} against ${fmt(pg.peer.peer.perS)} req/s)`
        : "not measured",
      met: pg ? pg.peer.throughputRatio >= TARGETS.pgPeerFactor : null,
    },
  );
  return out;
}

const REDIS_SIDES = ["redis", "redis-w2"] as const;
const SHORT: Partial<Record<TargetId, string>> = {
  bun: "SQLite",
  redis: "Redis",
  "redis-w2": "Redis, 2 workers",
  ceiling: "ceiling",
};

function redisVerdicts(r: RunReport): Verdict[] {
  const out: Verdict[] = [];
  const get = (id: string, t: TargetId) => loadOf(r.cells[id]?.[t]);
  for (const t of REDIS_SIDES) {
    for (const [id, min] of [
      ["default-25", TARGETS.redisDefaultShareOfCeiling],
      ["trial", TARGETS.redisTrialShareOfCeiling],
    ] as const) {
      const l = get(id, t);
      const c = get(id, "ceiling");
      const what = id === "trial" ? "trial pages" : "default page";
      out.push(
        {
          target: `${what}: ${SHORT[t]} ≥ ${min * 100} % of ceiling req/s`,
          measured: l && c ? `${fmt((100 * l.rps) / c.rps)} % (${fmt(l.rps)} of ${fmt(c.rps)} req/s)` : "not measured",
          met: l && c ? l.rps >= min * c.rps : null,
        },
        {
          target: `${what}: ${SHORT[t]} p99 < ${TARGETS.redisP99Ms} ms`,
          measured: l ? `${ms(l.p99Ms)} ms` : "not measured",
          met: l ? l.p99Ms < TARGETS.redisP99Ms : null,
        },
      );
    }
  }
  return out;
}

/** Requests per second that `cores` cores allow at this CPU per request; Redis, single-threaded, caps at one core's worth. */
export function projectedRps(cores: number, cpu: { marqueeUs: number; redisUs?: number }): number {
  const total = cpu.marqueeUs + (cpu.redisUs ?? 0);
  const byCores = (cores * 1e6) / total;
  return cpu.redisUs ? Math.min(byCores, 1e6 / cpu.redisUs) : byCores;
}

function redisTables(r: RunReport): string[] {
  const sides: TargetId[] = ["bun", ...REDIS_SIDES];
  if (!r.scenarios.some((s) => REDIS_SIDES.some((t) => r.cells[s.id]?.[t]))) return [];
  const share = (id: string, t: TargetId) => {
    const l = loadOf(r.cells[id]?.[t]);
    const c = loadOf(r.cells[id]?.ceiling);
    return l && c ? `${fmt((100 * l.rps) / c.rps)} %` : "–";
  };
  const rows = r.scenarios.map(
    (s) =>
      `| ${s.title} | ${sides.map((t) => [...cellText(r.cells[s.id]?.[t]), share(s.id, t)].join(" | ")).join(" | ")} |`,
  );
  const cpuRows: string[] = [];
  for (const id of ["default-25", "trial"]) {
    const s = r.scenarios.find((x) => x.id === id);
    if (!s) continue;
    for (const t of ["ceiling", ...sides] as TargetId[]) {
      const c = r.cells[id]?.[t];
      if (!c || !("load" in c) || !c.cpu) continue;
      const { marqueeUs, redisUs } = c.cpu;
      // The ceiling is the floor of HTTP, and the SQLite ledger is owned by one process: no workers to project.
      const projects = t === "redis" || t === "redis-w2";
      cpuRows.push(
        `| ${s.title} | ${SHORT[t]} | ${fmt(c.load.rps)} | ${fmt(marqueeUs)} | ${redisUs !== undefined ? fmt(redisUs) : "–"} | ${fmt(marqueeUs + (redisUs ?? 0))} | ${PROJECTED_CORES.map((n) => (projects ? fmt(projectedRps(n, c.cpu!)) : "–")).join(" | ")} | ${redisUs ? fmt(1e6 / redisUs) : "–"} |`,
      );
    }
  }
  const head = sides.map((t) => `${SHORT[t]} req/s | p50 ms | p99 ms | / ceiling`).join(" | ");
  return [
    "### The Redis ledger",
    "",
    `Marquee on Bun with \`--ledger redis://…\` (one process, and \`--workers 2\`) on the bench's own ${r.redis?.version ?? "redis-server"} started with deploy/redis.conf (append-only file fsynced every second, no eviction), measured in the same run and interleaved slice by slice with Marquee on the SQLite ledger and the ceiling; each has its own accounts, created the same way in its own ledger.`,
    "",
    `| scenario | ${head} |`,
    `|---|${sides.map(() => "--:|--:|--:|--:").join("|")}|`,
    ...rows,
    "",
    ...(cpuRows.length
      ? [
          "CPU per request: utime + stime from /proc of the server's processes (supervisor and workers) and of redis-server, read just before and after each measured slice, over the requests it served; the ceiling's own figure is the HTTP floor. The projection is what that CPU allows with as many workers as cores and the load generated elsewhere: cores / (Marquee + Redis µs), and never above one core of Redis (1 / Redis µs).",
          "",
          `| scenario | server | req/s | Marquee CPU µs/req | Redis CPU µs/req | total µs/req | ${PROJECTED_CORES.map((n) => `${n} cores req/s`).join(" | ")} | Redis cap req/s |`,
          `|---|---|--:|--:|--:|--:|${PROJECTED_CORES.map(() => "--:").join("|")}|--:|`,
          ...cpuRows,
          "",
        ]
      : []),
  ];
}

function uniqueVerdicts(r: RunReport): Verdict[] {
  const u = r.unique;
  if (!u) return [];
  const out: Verdict[] = [];
  const get = (id: string, side: UniqueSide) => u.cells[id]?.[side]?.load;
  const share = (id: string, min: number, title: string) => {
    const b = get(id, "bun");
    const c = get(id, "ceiling");
    out.push({
      target: `unique ${title}: Bun ≥ ${fmt(min * 100, 1)} % of ceiling`,
      measured: b && c ? `${fmt((100 * b.rps) / c.rps, 1)} % (${fmt(b.rps)} of ${fmt(c.rps)} req/s)` : "not measured",
      met: b && c ? b.rps >= min * c.rps : null,
    });
  };
  share("u-state", TARGETS.uniqueShareOfCeiling, "state");
  share("u-state-city", TARGETS.uniqueShareOfCeiling, "state + city");
  share("u-source", TARGETS.uniqueShareOfCeiling, "source");
  share("u-circle", TARGETS.uniqueGeoShareOfCeiling, "circle");
  share("u-polygon", TARGETS.uniqueGeoShareOfCeiling, "polygon");
  share("u-walk", TARGETS.uniqueShareOfCeiling, "cursor walk");
  const b = get("u-state", "bun");
  const p = get("u-state", "peer");
  out.push({
    target: `unique state: Bun ≥ ${TARGETS.uniqueStateVsPeer}x the straightforward peer`,
    measured: b && p ? `${fmt(b.rps / p.rps, 2)}x (${fmt(b.rps)} against ${fmt(p.rps)} req/s)` : "not measured",
    met: b && p ? b.rps >= TARGETS.uniqueStateVsPeer * p.rps : null,
  });
  for (const s of u.scenarios) {
    const l = get(s.id, "bun");
    const limit = s.geo ? TARGETS.uniqueGeoP99Ms : TARGETS.uniqueP99Ms;
    out.push({
      target: `unique ${s.id.slice(2)}: Bun p99 < ${limit} ms`,
      measured: l ? `${ms(l.p99Ms)} ms` : "not measured",
      met: l ? l.p99Ms < limit : null,
    });
  }
  return out;
}

/** A unique-traffic cell's CPU a request, or a dash when it was not read. */
const uniqueCpu = (cell: UniqueCell | undefined) =>
  cell?.cpuUs !== undefined && Number.isFinite(cell.cpuUs) ? fmt(cell.cpuUs) : "–";

/** The ceiling's CPU a request over the unique section's cells (it replays one page throughout). */
function cpuFloor(u: NonNullable<RunReport["unique"]>): string {
  const values = Object.values(u.cells)
    .map((c) => c.ceiling?.cpuUs)
    .filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (values.length === 0) return "–";
  return `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;
}

function uniqueTable(r: RunReport): string[] {
  const u = r.unique;
  if (!u) return [];
  const rows = u.scenarios.map((s) => {
    const c = u.cells[s.id] ?? {};
    const b = c.bun?.load;
    const ceil = c.ceiling?.load;
    const peer = c.peer?.load;
    const repeats = c.bun?.repeats ? ` (${fmt(c.bun.repeats)} repeated)` : "";
    return `| ${s.title} | ${b ? `${fmt(b.rps)}${repeats}` : "–"} | ${b ? ms(b.p50Ms) : "–"} | ${b ? ms(b.p99Ms) : "–"} | ${b && ceil ? `${fmt((100 * b.rps) / ceil.rps, 1)} %` : "–"} | ${uniqueCpu(c.bun)} | ${peer ? `${fmt(peer.rps)} (p99 ${ms(peer.p99Ms)})` : "–"} | ${peer ? uniqueCpu(c.peer) : "–"} | ${b && peer ? `${fmt(b.rps / peer.rps, 2)}x` : "–"} | ${c.bun?.privateMb ? `${fmt(c.bun.privateMb.end)} (${fmt(c.bun.privateMb.peak)})` : "–"} |`;
  });
  return [
    "### Unique traffic",
    "",
    `No URL twice within a scenario: each request takes the next of a list of new paths (test/bench/lib/unique.ts), for Marquee and the peer alike; the ceiling replays one captured page (\`${u.ceilingPath.slice(0, 60)}…\`, ${fmt((u.cells["u-state"]?.ceiling?.load.bytesPerAnswer ?? 0) / 1024, 1)} kB). A fresh Marquee process serves this section, warmed first by ${LOAD.targetWarmupS} s of the first scenario's list (URLs not measured again).`,
    "",
    "| scenario | Bun req/s | Bun p50 ms | Bun p99 ms | Bun / ceiling | Bun CPU µs/req | peer req/s | peer CPU µs/req | Bun / peer | Bun private MB (peak) |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ...rows,
    "",
    `CPU a request: utime + stime of the server's processes (every thread: the JIT's and the collector's too) over its measured slices, divided by the requests they served; the ceiling's own figure, the HTTP floor, was ${cpuFloor(u)} µs. Bun private MB: RssAnon + swap at the end of the scenario, and the highest read (every 250 ms) from its warm-up on; the scenarios run in the table's order in one process.`,
    "",
    ...(u.rss ? [`Memory of that Marquee under the unique traffic: ${memoryText(u.rss)}.`, ""] : []),
  ];
}

/** Private memory first (the target counts it), then RSS, which adds the mapped file pages. */
function memoryText(m: MemoryReading): string {
  const peak = m.privatePeakMb > m.privateMb ? ` (peak ${fmt(m.privatePeakMb)} MB)` : "";
  return `private ${fmt(m.privateMb)} MB${peak}; RSS ${fmt(m.rssMb)} MB (peak ${fmt(m.peakMb)} MB) with the mapped file pages`;
}

function stagesTable(r: RunReport): string[] {
  if (!r.stages) return [];
  const stages = Object.keys(r.stages[0]?.meanUs ?? {});
  return [
    "### Where a new request's microseconds go",
    "",
    "In-process, one request at a time (test/bench/list-stages.ts), mean µs per stage over new requests of each class (`walk`: cursor walks of 40 pages, each page following the last one's cursor); `geo` is the candidate search, `select` the snapshot rows, `hydrate` the live rows and the body.",
    "",
    `| class | ${stages.join(" | ")} | total mean | total median |`,
    `|---|${stages.map(() => "--:").join("|")}|--:|--:|`,
    ...r.stages.map(
      (s) =>
        `| ${s.cls} | ${stages.map((k) => fmt((s.meanUs as Record<string, number>)[k])).join(" | ")} | ${fmt(s.totalMeanUs)} | ${fmt(s.totalMedianUs)} |`,
    ),
    "",
  ];
}

export function renderMarkdown(r: RunReport): string {
  const m = r.machine;
  const v = verdicts(r);
  const su = r.syncUnderLoad;
  const st = r.syncThroughput;
  const rssRows = (Object.keys(r.rss) as TargetId[]).map(
    (t) => `| memory after load, ${TARGET_TITLES[t]} | ${memoryText(r.rss[t]!)} |`,
  );
  return [
    `Run of ${m.date} on commit \`${m.commit}\`${m.dirty ? " (with uncommitted changes)" : ""}: ${m.nproc} × ${m.cpuModel}, ${m.memoryGb} GB RAM, ${m.kernel}; Bun ${m.bun}, Node ${m.node}, ${m.wrk}; load average ${m.loadAverage} at the start. Whole run ${fmt(r.elapsedS)} s.`,
    "",
    `Replica: ${fmt(r.replica.events)} events (${fmt(r.replica.snapshotEvents)} servable in the snapshot), ${fmt(r.replica.venues)} venues, demo data anchored on ${r.replica.anchor}${r.replica.reused ? ", reused from .bench/" : ", built for this run"}. Load: wrk on loopback, ${LOAD.threads} threads, ${LOAD.connections} connections, ${LOAD.warmupS} s warm-up then ${LOAD.durationS} s measured per cell in ${LOAD.slices} slices of ${LOAD.durationS / LOAD.slices} s (and ${LOAD.targetWarmupS} s more before each server's first cell); Marquee on Bun and the ceiling${r.redis ? " (and Marquee on the Redis ledger, one process and 2 workers)" : ""} side by side, their slices taking turns A B B A…, the other servers one at a time.`,
    "",
    "### Requests",
    "",
    scenarioTable(r),
    "",
    ...redisTables(r),
    ...uniqueTable(r),
    ...stagesTable(r),
    ...(r.observability
      ? [
          "### Request log and metrics",
          "",
          typeof r.observability === "string" ? r.observability : `Not measured: ${r.observability.skipped}`,
          "",
        ]
      : []),
    "### Other figures",
    "",
    "| figure | value |",
    "|---|---|",
    ...rssRows,
    ...(r.listPath
      ? [
          `| list path (server/list, server/limits, server/access.ts, the Redis access stages, db/ query, filter, geo and stores: test/bench/lib/list-path.ts) | ${fmt(r.listPath.lines)} lines in ${r.listPath.files} files |`,
        ]
      : []),
    `| cold start, dist/marquee serve to first 200 of /healthz | ${r.coldStartMs.length ? `${r.coldStartMs.map((x) => fmt(x)).join(", ")} ms (median ${fmt(median(r.coldStartMs))} ms)` : "not measured"} |`,
    `| sync of the ${fmt(DATA.events)}-event demo stream into an empty replica | ${st ? ("skipped" in st ? st.skipped : `${fmt(st.records)} records in ${fmt(st.seconds, 1)} s = ${fmt(st.recordsPerS)} records/s (median of ${st.runs.length} runs: ${st.runs.map((x) => fmt(x, 1)).join(", ")} s)`) : "not measured"} |`,
    ...(r.postgres
      ? [
          "skipped" in r.postgres
            ? `| PostgreSQL upstream | ${r.postgres.skipped} |`
            : `| PostgreSQL upstream, ${fmt(DATA.events)} demo events | initial copy ${fmt(r.postgres.copy.rows)} rows in ${fmt(r.postgres.copy.seconds, 1)} s (${fmt(r.postgres.copy.rowsPerS)} rows/s, median of ${r.postgres.copy.runs.length} runs: ${r.postgres.copy.runs.map((x) => fmt(x, 1)).join(", ")} s); ${fmt(r.postgres.streaming.committed)} changes streamed in ${fmt(r.postgres.streaming.seconds)} s, commit to served p50 ${fmt(r.postgres.streaming.commitToServed.p50)} ms, p99 ${fmt(r.postgres.streaming.commitToServed.p99)} ms; default page p99 ${ms(r.postgres.streaming.duringStream.p99)} ms during the stream, ${ms(r.postgres.streaming.idle.p99)} ms idle; default page ${fmt(r.postgres.peer.marquee.perS)} req/s against ${fmt(r.postgres.peer.peer.perS)} from a server reading PostgreSQL (4 connections each) |`,
        ]
      : []),
    `| default page while a ${fmt(DATA.changeRecords)}-change sync runs (Bun) | ${su ? ("skipped" in su ? su.skipped : `sync ${fmt(su.syncSeconds, 1)} s; ${fmt(su.load.rps)} req/s, p50 ${ms(su.load.p50Ms)} ms, p99 ${ms(su.load.p99Ms)} ms (idle just before: ${fmt(su.idle.rps)} req/s, p99 ${ms(su.idle.p99Ms)} ms)`) : "not measured"} |`,
    "",
    ...(r.startup ? ["### Start-up", "", ...startupTables(r.startup), ""] : []),
    "### Targets",
    "",
    "| target | measured | verdict |",
    "|---|---|---|",
    ...v.map(
      (x) => `| ${x.target} | ${x.measured} | ${x.met === null ? "not measured" : x.met ? "met" : "**missed**"} |`,
    ),
    ...(r.notes.length ? ["", "### Notes from this run", "", ...r.notes.map((n) => `- ${n}`)] : []),
  ].join("\n");
}

/** Replaces the generated section of RESULTS.md, keeping everything written around it. */
export function writeResults(markdown: string): void {
  const section = `${BEGIN}\n${markdown}\n${END}`;
  if (!existsSync(RESULTS_MD)) {
    writeFileSync(
      RESULTS_MD,
      `# Benchmark results\n\nWritten by \`npm run bench\` (test/bench/run.ts).\n\n${section}\n`,
    );
    return;
  }
  const text = readFileSync(RESULTS_MD, "utf8");
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  writeFileSync(
    RESULTS_MD,
    a >= 0 && b > a ? text.slice(0, a) + section + text.slice(b + END.length) : `${text.trimEnd()}\n\n${section}\n`,
  );
}
