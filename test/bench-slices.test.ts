/**
 * The benchmark measures in slices and reports them as one run (test/bench/lib/wrk.ts): the
 * combined figures must be those of the pooled samples, not an average of slice figures.
 */
import { describe, expect, it } from "vitest";
import { combine, type Slice } from "./bench/lib/wrk.ts";

/** A slice made from raw latency samples in microseconds, as wrk would summarise them. */
function sliceOf(samples: number[], seconds: number, extra: Partial<Slice> = {}): Slice {
  const histogram = new Map<number, number>();
  for (const us of samples) histogram.set(us, (histogram.get(us) ?? 0) + 1);
  return {
    requests: samples.length,
    seconds,
    rps: samples.length / seconds,
    p50Ms: 0,
    p90Ms: 0,
    p99Ms: 0,
    maxMs: Math.max(...samples) / 1000,
    bytesPerAnswer: 100,
    non2xx: 0,
    socketErrors: 0,
    histogram,
    ...extra,
  };
}

/** wrk's rule (stats_percentile): the first latency whose running count reaches round(p% · n + 0.5). */
function pooled(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.round((p / 100) * sorted.length + 0.5) - 1] / 1000;
}

describe("combine (bench slices)", () => {
  it("adds requests and seconds and takes percentiles over the pooled samples", () => {
    const fast = Array.from({ length: 900 }, (_, i) => 500 + (i % 200));
    const slow = Array.from({ length: 100 }, (_, i) => 5_000 + i * 10);
    const a = sliceOf(fast.slice(0, 450), 1);
    const b = sliceOf([...fast.slice(450), ...slow], 1.5, { non2xx: 2, socketErrors: 1 });
    const c = combine([a, b]);
    expect(c.requests).toBe(1000);
    expect(c.seconds).toBe(2.5);
    expect(c.rps).toBe(400);
    const all = [...fast, ...slow];
    expect(c.p50Ms).toBe(pooled(all, 50));
    expect(c.p90Ms).toBe(pooled(all, 90));
    expect(c.p99Ms).toBe(pooled(all, 99));
    // Averaging the slices' own p99s would give something else entirely.
    expect(c.p99Ms).not.toBe((pooled(fast.slice(0, 450), 99) + pooled([...fast.slice(450), ...slow], 99)) / 2);
    expect(c.maxMs).toBe(5.99);
    expect(c.non2xx).toBe(2);
    expect(c.socketErrors).toBe(1);
  });

  it("merges answer counts by status and weights answer sizes by requests", () => {
    const a = sliceOf([100, 200], 1, { statuses: { "200": 2 }, bytesPerAnswer: 1000 });
    const b = sliceOf([100, 100, 300, 400, 500, 600], 1, { statuses: { "200": 5, "429": 1 }, bytesPerAnswer: 200 });
    const c = combine([a, b]);
    expect(c.statuses).toEqual({ "200": 7, "429": 1 });
    expect(c.bytesPerAnswer).toBe((2 * 1000 + 6 * 200) / 8);
    expect(combine([sliceOf([1], 1)]).statuses).toBeUndefined();
  });
});
