import { describe, expect, it } from "vitest";
import { CollectionPolicy } from "../server/background.ts";

const MIB = 1024 * 1024;
/** The tuning's lines, with the line for frequent collections out of reach unless a test moves it. */
const limits = {
  collectAbovePrivateBytes: 352 * MIB,
  collectEveryMs: 5_000,
  collectOftenAbovePrivateBytes: 4096 * MIB,
  collectOftenEveryMs: 1_000,
  collectGrowthBytes: 32 * MIB,
};

/** Readings one a second from `startMs`: the seconds at which a collection was due. */
function collections(policy: CollectionPolicy, mib: number[], startMs = 0): number[] {
  return mib.flatMap((m, s) => (policy.due(m * MIB, startMs + s * 1000) ? [s] : []));
}

describe("the memory guard's collection policy", () => {
  it("collects once private memory passes the line after growing, then not before the spacing", () => {
    const policy = new CollectionPolicy(limits);
    // Growing under new traffic: due at the first reading past the line, then 5 s later at the earliest.
    expect(collections(policy, [200, 300, 360, 380, 400, 420, 440, 460, 480, 500])).toEqual([2, 7]);
  });

  it("leaves an idle server alone when what a collection cannot free sits above the line", () => {
    const policy = new CollectionPolicy(limits);
    // Live caches of 450 MB: one collection as it grew there, none while it stays put.
    expect(collections(policy, [300, 380, 450, 450, 450, 450, 450, 450, 450, 450, 450, 450, 450, 450])).toEqual([1]);
    // New garbage on top of it is collected again.
    expect(collections(policy, [450, 470, 490, 500], 20_000)).toEqual([2]);
  });

  it("counts growth from the lowest reading after a collection, as memory is handed back", () => {
    const policy = new CollectionPolicy(limits);
    expect(policy.due(400 * MIB, 0)).toBe(false); // the first reading is the floor
    expect(policy.due(440 * MIB, 1_000)).toBe(true);
    // The collection's memory comes back over a few seconds: 430, then 380; growth counts from 380.
    expect(collections(policy, [430, 380, 390, 400, 405, 410, 411, 420], 2_000)).toEqual([7]);
  });

  it("collects as often as every second past the higher line, growth still counted from the floor", () => {
    const policy = new CollectionPolicy({ ...limits, collectOftenAbovePrivateBytes: 432 * MIB });
    // Past 432 MB the spacing is 1 s, not 5: due at 6 s (60 MB above 380) and 9 s (40 above 460), not 8.
    expect(collections(policy, [200, 300, 360, 380, 400, 420, 440, 460, 480, 500])).toEqual([2, 6, 9]);
    // Below it again, 5 s apart: 3 s after the last one, memory at 400 MB grown 45 since, is not due.
    expect(collections(policy, [355, 360, 400, 420, 430], 10_000)).toEqual([4]);
  });

  it("never collects below the line, however much memory grows", () => {
    const policy = new CollectionPolicy(limits);
    expect(collections(policy, [10, 100, 200, 300, 350, 352])).toEqual([]);
  });
});
