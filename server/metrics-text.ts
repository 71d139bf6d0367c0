/// <reference path="./prom-client-metrics.d.ts" />
/**
 * `/metrics` (docs/operations.md, Logs and metrics): a serving process's metric families (its
 * request metrics, the replica's, the ledger's and the upstream's gauges, the build, and
 * prom-client's standard `process_*` metrics) and the Prometheus text of one or
 * more processes' families merged. prom-client runs the same under Bun and Node; its
 * `AggregatorRegistry.aggregate` merges the families of a `--workers` supervisor's workers as it
 * merges a Node cluster's: counters, histograms and `process_*` summed, the shared replica's
 * gauges by their own aggregator (the same replica counted once). It is loaded only by a server
 * with an admin port.
 */
import type { Registry } from "prom-client";
import type { Health, Readiness } from "./health.ts";
import { gauge, type MetricFamily, RequestMetrics } from "./metrics.ts";
import type { BuildInfo } from "./version.ts";

type PromClient = typeof import("prom-client");

/**
 * prom-client's standard `process_*` metrics (CPU seconds, start time, resident and virtual
 * memory, open and maximum file descriptors), read when scraped. Its `nodejs_*` ones are left
 * out: the event loop's delay and the garbage collector are watched all the time, which cost the
 * default page more than the 10 % the request log and the metrics may take together, and the
 * per-heap-space gauges walk the heap on Bun at every scrape (docs/perf-history.md, "Round 25").
 */
const processMetrics = () =>
  Promise.all([
    import("prom-client/lib/metrics/processCpuTotal.js"),
    import("prom-client/lib/metrics/processStartTime.js"),
    import("prom-client/lib/metrics/osMemoryHeap.js"),
    import("prom-client/lib/metrics/processOpenFileDescriptors.js"),
    import("prom-client/lib/metrics/processMaxFileDescriptors.js"),
  ]);

export class Metrics {
  readonly requests = new RequestMetrics();

  private constructor(
    private readonly registry: Registry,
    private readonly build: BuildInfo,
  ) {}

  /** Loads prom-client and starts its standard process metrics. */
  static async create(build: BuildInfo): Promise<Metrics> {
    const prom = (await import("prom-client")).default as PromClient;
    const registry = new prom.Registry();
    for (const m of await processMetrics()) m.default(registry, {});
    return new Metrics(registry, build);
  }

  /** This process's families now; `readiness` when the caller has just read it. */
  async families(health: Health, readiness?: Readiness): Promise<MetricFamily[]> {
    const r = readiness ?? (await health.readiness());
    const appliedMs = r.upstream?.appliedAt ? Date.parse(r.upstream.appliedAt) : null;
    const nowMs = health.now();
    const standard = (await this.registry.getMetricsAsJSON()).map((m) => ({
      ...(m as unknown as MetricFamily),
      // A merged scrape's start time is the earliest worker's (prom-client's cluster omits it).
      aggregator: (m.aggregator === "omit" ? "min" : m.aggregator) as MetricFamily["aggregator"],
    }));
    return [
      ...this.requests.families(),
      gauge("marquee_replica_events", "Events in the replica, servable or not.", r.stats.events, "max"),
      gauge("marquee_snapshot_events", "Servable events at the last snapshot refresh.", r.stats.snapshotEvents, "max"),
      gauge(
        "marquee_snapshot_age_seconds",
        "Seconds since the serving snapshot was refreshed.",
        r.stats.snapshotAt === null ? null : Math.max(0, (nowMs - r.stats.snapshotAt) / 1000),
        "max",
      ),
      gauge(
        "marquee_upstream_lag_bytes",
        "Write-ahead log the followed PostgreSQL upstream's slot holds back.",
        r.upstream?.lagBytes ?? null,
        "max",
      ),
      gauge(
        "marquee_upstream_applied_age_seconds",
        "Seconds since changes from the followed upstream were last applied.",
        appliedMs === null ? null : Math.max(0, (nowMs - appliedMs) / 1000),
        "max",
      ),
      gauge("marquee_ledger_up", "1 when the ledger answers, else 0.", r.ledgerUp ? 1 : 0, "min"),
      gauge("marquee_ready", "1 when /readyz answers 200, else 0.", r.ready ? 1 : 0, "min"),
      gauge("marquee_build_info", "The build: always 1, its version in the labels.", 1, "first", {
        version: this.build.version,
        commit: this.build.commit ?? "",
        runtime: this.build.runtime,
      }),
      ...standard,
    ];
  }
}

/** The Prometheus text of one or more processes' families, merged, and its content type. */
export async function renderMetrics(processes: MetricFamily[][]): Promise<{ text: string; contentType: string }> {
  const prom = (await import("prom-client")).default as PromClient;
  const merged = prom.AggregatorRegistry.aggregate(
    processes as unknown as Parameters<PromClient["AggregatorRegistry"]["aggregate"]>[0],
  );
  return { text: await merged.metrics(), contentType: merged.contentType };
}
