/**
 * The request metrics of one serving process (docs/operations.md, Logs and metrics): counted as
 * each request is answered, with no allocation once a route, method, status and code have been
 * seen, and read as metric families (`MetricFamily`) only when scraped.
 *
 * A metric family is plain data in the shape prom-client's `getMetricsAsJSON` gives, so a
 * `--workers` supervisor merges its workers' families with prom-client's aggregation
 * (server/metrics-text.ts): counters and histograms summed, the replica's gauges by the
 * aggregator each declares.
 */
import type { RequestRecord } from "./request-record.ts";

export interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  /** `name_bucket`, `name_sum` or `name_count` for a histogram's values. */
  metricName?: string;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  /** How a supervisor merges the family across workers. */
  aggregator: "sum" | "max" | "min" | "first";
  values: MetricValue[];
}

/** Upper bounds of the duration histogram's buckets, in seconds: a cached page takes tens of µs. */
export const DURATION_BUCKETS_S = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;

/** One route's counts: by method, status and code, and its duration histogram. */
class RouteCounts {
  /** method → status → code ("" for none) → requests. */
  readonly byOutcome = new Map<string, Map<number, Map<string, number>>>();
  /** Requests per bucket (not cumulative), the last one past every bound. */
  readonly buckets = new Float64Array(DURATION_BUCKETS_S.length + 1);
  sumS = 0;
  count = 0;
}

export class RequestMetrics {
  readonly #routes = new Map<string, RouteCounts>();
  #rows = 0;
  #handoffs = 0;

  observe(r: RequestRecord): void {
    let route = this.#routes.get(r.route);
    if (!route) {
      route = new RouteCounts();
      this.#routes.set(r.route, route);
    }
    let statuses = route.byOutcome.get(r.method);
    if (!statuses) {
      statuses = new Map();
      route.byOutcome.set(r.method, statuses);
    }
    let codes = statuses.get(r.status);
    if (!codes) {
      codes = new Map();
      statuses.set(r.status, codes);
    }
    const code = r.code ?? "";
    codes.set(code, (codes.get(code) ?? 0) + 1);
    const seconds = r.durationMs / 1000;
    let i = 0;
    while (i < DURATION_BUCKETS_S.length && seconds > DURATION_BUCKETS_S[i]) i++;
    route.buckets[i]++;
    route.sumS += seconds;
    route.count++;
    this.#rows += r.rows;
    // A created handoff is a 201 of the creating route (docs/api.md, Ticket handoffs).
    if (r.status === 201 && r.route === "/v1/ticket-handoffs") this.#handoffs++;
  }

  families(): MetricFamily[] {
    const requests: MetricValue[] = [];
    const durations: MetricValue[] = [];
    for (const [route, counts] of this.#routes) {
      for (const [method, statuses] of counts.byOutcome)
        for (const [status, codes] of statuses)
          for (const [code, value] of codes) requests.push({ value, labels: { route, method, status, code } });
      let cumulative = 0;
      for (let i = 0; i < DURATION_BUCKETS_S.length; i++) {
        cumulative += counts.buckets[i];
        durations.push({
          value: cumulative,
          labels: { route, le: DURATION_BUCKETS_S[i] },
          metricName: "marquee_http_request_duration_seconds_bucket",
        });
      }
      durations.push(
        {
          value: counts.count,
          labels: { route, le: "+Inf" },
          metricName: "marquee_http_request_duration_seconds_bucket",
        },
        { value: counts.sumS, labels: { route }, metricName: "marquee_http_request_duration_seconds_sum" },
        { value: counts.count, labels: { route }, metricName: "marquee_http_request_duration_seconds_count" },
      );
    }
    return [
      {
        name: "marquee_http_requests_total",
        help: "Answered HTTP requests, by route pattern, method, status and error code (empty for none).",
        type: "counter",
        aggregator: "sum",
        values: requests,
      },
      {
        name: "marquee_http_request_duration_seconds",
        help: "Time from a request's arrival to its answer, by route pattern.",
        type: "histogram",
        aggregator: "sum",
        values: durations,
      },
      counter("marquee_rows_delivered_total", "Events delivered in answers.", this.#rows),
      counter("marquee_handoffs_created_total", "Ticket handoffs created (201 answers).", this.#handoffs),
    ];
  }
}

export function counter(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: "counter", aggregator: "sum", values: [{ value, labels: {} }] };
}

/** A gauge without labels; none when `value` is null (unknown). */
export function gauge(
  name: string,
  help: string,
  value: number | null,
  aggregator: MetricFamily["aggregator"],
  labels: Record<string, string> = {},
): MetricFamily {
  return { name, help, type: "gauge", aggregator, values: value === null ? [] : [{ value, labels }] };
}
