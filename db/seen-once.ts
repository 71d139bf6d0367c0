/**
 * What was used once, for caches that keep an entry only from its second use (docs/perf-history.md, "Round 17"):
 * one bit a number, modulo the table's size (numbers sharing a bit let the second be kept at once); the table
 * restarts a quarter full. Under new traffic each entry is then used once and dropped young, instead of pushing
 * kept ones out and leaving them for the collector's old generation (docs/perf-history.md, "Round 29").
 */
export class SeenOnce {
  readonly #table: Uint32Array;
  #count = 0;

  /** `bits`: the table's size in bits, a power of two. */
  constructor(private readonly bits: number) {
    this.#table = new Uint32Array(bits / 32);
  }

  /** Whether `n` was used before; marks it used. */
  admit(n: number): boolean {
    const slot = n & (this.bits - 1);
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    if (this.#table[word] & bit) return true;
    this.#table[word] |= bit;
    if (++this.#count >= this.bits / 4) this.clear();
    return false;
  }

  clear(): void {
    this.#table.fill(0);
    this.#count = 0;
  }
}

/** A string's 32-bit FNV-1a hash over its UTF-16 code units, as a number for `SeenOnce`. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
