/**
 * The serving process's cache (db/two-generations.ts): what is read survives a turn of the
 * generations, what is not is dropped on the second turn, the count or size held stays within the
 * bound, and a read never returns anything but the value last set for its key.
 */
import { describe, expect, it } from "vitest";
import { TwoGenerations } from "../db/two-generations.ts";

const sized = (size: number) => new TwoGenerations<number, string>({ size, sizeOf: (v) => v.length });

describe("TwoGenerations", () => {
  it("turns when the young generation holds half the bytes, keeping what was read and dropping the rest", () => {
    const cache = sized(40);
    for (let k = 0; k < 4; k++) cache.set(k, "x".repeat(5)); // 20: half the bound, all young
    cache.set(10, "y".repeat(5)); // would pass half: the young generation turns old
    expect(cache.held).toBe(25);
    expect(cache.get(1)).toBe("xxxxx"); // read from the old generation: moved into the young one
    for (let k = 11; k < 14; k++) cache.set(k, "y".repeat(5)); // 13 turns it again, dropping 0, 2 and 3
    expect(cache.get(1)).toBe("xxxxx");
    for (const k of [0, 2, 3]) expect(cache.get(k)).toBeUndefined();
    expect(cache.has(12)).toBe(true);
    expect(cache.size).toBe(5);
  });

  it("replaces a key's value and its bytes, wherever the key was", () => {
    const cache = sized(100);
    cache.set(7, "a".repeat(10));
    cache.set(7, "b".repeat(4));
    expect([cache.get(7), cache.held, cache.size]).toEqual(["bbbb", 4, 1]);
    for (let k = 0; k < 5; k++) cache.set(k, "c".repeat(10)); // turns with 7 in it
    cache.set(7, "d");
    expect([cache.get(7), cache.held, cache.size]).toEqual(["d", 51, 6]);
    cache.clear();
    expect([cache.get(7), cache.held, cache.size]).toEqual([undefined, 0, 0]);
  });

  it("bounds a count alone, or a count and a size together", () => {
    const counted = new TwoGenerations<number, string>({ entries: 10 });
    for (let k = 0; k < 100; k++) counted.set(k, "v");
    expect(counted.size).toBeLessThanOrEqual(10);
    expect(counted.held).toBe(counted.size);
    // A size of 100 in at most 4 entries: each counts at least 25.
    const both = new TwoGenerations<number, string>({ entries: 4, size: 100, sizeOf: (v) => v.length });
    for (let k = 0; k < 100; k++) both.set(k, "s");
    expect(both.size).toBeLessThanOrEqual(4);
    both.set(500, "l".repeat(60)); // over half the bound: not kept
    expect(both.has(500)).toBe(false);
    expect(both.held).toBeLessThanOrEqual(100);
  });

  it("does not move a value asked after with has; deletes; counts a value set again at its new size", () => {
    const cache = new TwoGenerations<number, { bytes: number }>({ size: 100, sizeOf: (v) => v.bytes });
    const growing = { bytes: 10 };
    cache.set(1, growing);
    growing.bytes = 30;
    cache.set(1, growing);
    expect(cache.held).toBe(30);
    for (let k = 2; k < 5; k++) cache.set(k, { bytes: 10 }); // 4 would pass half the bound: turns
    expect(cache.has(1)).toBe(true); // in the old generation
    for (let k = 5; k < 10; k++) cache.set(k, { bytes: 10 }); // 9 turns it again: 1 was not read, so dropped
    expect(cache.has(1)).toBe(false);
    expect(cache.delete(9)).toBe(true);
    expect(cache.delete(9)).toBe(false);
    expect([cache.size, cache.held]).toEqual([5, 50]);
  });

  it("keeps false as a value (a kept answer that a row is gone)", () => {
    const cache = new TwoGenerations<number, string | false>({
      size: 100,
      sizeOf: (v) => (v === false ? 1 : v.length),
    });
    cache.set(1, false);
    expect(cache.get(1)).toBe(false);
  });

  it("over random reads and writes, holds at most the bound and never a stale value", () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    const cache = sized(1000);
    const last = new Map<number, string>();
    for (let i = 0; i < 20_000; i++) {
      const k = rand(300);
      if (rand(3) === 0) {
        const v = `${i}:`.padEnd(1 + rand(60), "z");
        cache.set(k, v);
        last.set(k, v);
      } else {
        const v = cache.get(k);
        if (v !== undefined) expect(v).toBe(last.get(k));
      }
      expect(cache.held).toBeLessThanOrEqual(1000);
    }
    expect(cache.size).toBeGreaterThan(0);
  });
});
