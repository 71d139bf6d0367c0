/**
 * Seeded randomness for the demo data. Same seed, same bytes, on Bun and on Node: only
 * integer and IEEE-exact arithmetic is used (no Math.random, no transcendental functions,
 * whose last bits may differ between JavaScript engines).
 */

/** cyrb128: four 32-bit words from a string, used to seed sfc32. */
function hashSeed(text: string): [number, number, number, number] {
  let h1 = 1779033703,
    h2 = 3144134277,
    h3 = 1013904242,
    h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  return [h1 >>> 0, (h2 ^ h1) >>> 0, (h3 ^ h1) >>> 0, (h4 ^ h1) >>> 0];
}

/** A small fast generator (sfc32) with the helpers the demo data needs. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string, stream = 0) {
    const [a, b, c, d] = hashSeed(seed);
    this.a = a;
    this.b = (b ^ Math.imul(stream, 0x9e3779b9)) >>> 0;
    this.c = (c + stream) >>> 0;
    this.d = d;
    for (let i = 0; i < 12; i++) this.uint32();
  }

  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** Picks from `[weight, value]` pairs. */
  weighted<T>(pairs: readonly (readonly [number, T])[]): T {
    let total = 0;
    for (const [w] of pairs) total += w;
    let x = this.next() * total;
    for (const [w, value] of pairs) {
      x -= w;
      if (x < 0) return value;
    }
    return pairs[pairs.length - 1][1];
  }

  /** A point in the unit disc, denser towards the centre (uniform radius, not uniform area). */
  disc(): [number, number] {
    for (;;) {
      const x = this.next() * 2 - 1;
      const y = this.next() * 2 - 1;
      if (x * x + y * y <= 1) {
        const r = this.next();
        return [x * r, y * r];
      }
    }
  }
}

/** A fixed weighted choice, summed once (for tables used on every event). */
export class Table<T> {
  private readonly cumulative: number[] = [];
  private readonly values: T[] = [];
  private readonly total: number;

  constructor(pairs: readonly (readonly [number, T])[]) {
    let sum = 0;
    for (const [w, value] of pairs) {
      sum += w;
      this.cumulative.push(sum);
      this.values.push(value);
    }
    this.total = sum;
  }

  pick(random: Random): T {
    const x = random.next() * this.total;
    const c = this.cumulative;
    for (let i = 0; i < c.length; i++) if (x < c[i]) return this.values[i];
    return this.values[this.values.length - 1];
  }
}

/** Picks indexes in proportion to fixed weights in O(log n) (cumulative sums + binary search). */
export class WeightedIndex {
  private readonly cumulative: Float64Array;

  constructor(weights: ArrayLike<number>) {
    this.cumulative = new Float64Array(weights.length);
    let sum = 0;
    for (let i = 0; i < weights.length; i++) this.cumulative[i] = sum += weights[i];
  }

  pick(random: Random): number {
    const c = this.cumulative;
    const x = random.next() * c[c.length - 1];
    let lo = 0;
    let hi = c.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (c[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
