/**
 * The two-generation cache behind the kept hydrated events (db/two-generations.ts): what is read
 * survives a turn of the generations, what is not is dropped on the second turn, the bytes held stay
 * within the bound, and a read never returns anything but the value last set for its key.
 */
import { describe, expect, it } from "vitest";
import { TwoGenerations } from "../db/two-generations.ts";

const sized = (maxBytes: number) => new TwoGenerations<number, string>(maxBytes, (v) => v.length);

describe("TwoGenerations", () => {
  it("turns when the young generation holds half the bytes, keeping what was read and dropping the rest", () => {
    const cache = sized(40);
    for (let k = 0; k < 4; k++) cache.set(k, "x".repeat(5)); // 20 bytes: the young generation turns old
    expect(cache.bytes).toBe(20);
    expect(cache.get(1)).toBe("xxxxx"); // read from the old generation: moved into the young one
    for (let k = 10; k < 13; k++) cache.set(k, "y".repeat(5)); // 20 young bytes with 1: turns again
    expect(cache.get(1)).toBe("xxxxx");
    for (const k of [0, 2, 3]) expect(cache.get(k)).toBeUndefined();
    expect(cache.has(12)).toBe(true);
    expect(cache.size).toBe(4);
  });

  it("replaces a key's value and its bytes, wherever the key was", () => {
    const cache = sized(100);
    cache.set(7, "a".repeat(10));
    cache.set(7, "b".repeat(4));
    expect([cache.get(7), cache.bytes, cache.size]).toEqual(["bbbb", 4, 1]);
    for (let k = 0; k < 5; k++) cache.set(k, "c".repeat(10)); // turns with 7 in it
    cache.set(7, "d");
    expect([cache.get(7), cache.bytes, cache.size]).toEqual(["d", 51, 6]);
    cache.clear();
    expect([cache.get(7), cache.bytes, cache.size]).toEqual([undefined, 0, 0]);
  });

  it("keeps false as a value (a kept answer that a row is gone)", () => {
    const cache = new TwoGenerations<number, string | false>(100, (v) => (v === false ? 1 : v.length));
    cache.set(1, false);
    expect(cache.get(1)).toBe(false);
  });

  it("over random reads and writes, holds at most the bound plus one value and never a stale value", () => {
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
      expect(cache.bytes).toBeLessThanOrEqual(1000 + 60);
    }
    expect(cache.size).toBeGreaterThan(0);
  });
});
