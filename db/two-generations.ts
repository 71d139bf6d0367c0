/**
 * The caches of the serving process, bounded in count, in size (bytes, by the caller's estimate) or both (then each
 * value counts at least `size / entries`), in two generations: a read looks in the young one, then in the old one,
 * moving a value found there into the young one; when the young one would pass half the bound it becomes the old one
 * and the old one is dropped. A hit costs one or two Map reads, where lru-cache 11 also kept a list in order and built
 * an options object on every call (docs/perf-history.md, "Round 30"). A value over half the bound is not kept.
 */
export class TwoGenerations<K, V> {
  #young = new Map<K, V>();
  #old = new Map<K, V>();
  /** Each kept key's size as it was set (a value may grow and be set again). */
  readonly #sizes = new Map<K, number>();
  #youngSize = 0;
  #held = 0;
  readonly #max: number;
  readonly #sizeOf: (v: V) => number;

  constructor({ entries, size, sizeOf }: { entries?: number; size?: number; sizeOf?: (v: V) => number }) {
    const least = entries !== undefined && size !== undefined ? size / entries : 0;
    this.#max = size ?? entries ?? Number.POSITIVE_INFINITY;
    this.#sizeOf = !sizeOf ? () => 1 : least > 0 ? (v) => Math.max(least, sizeOf(v)) : sizeOf;
  }

  get(k: K): V | undefined {
    const young = this.#young.get(k);
    if (young !== undefined) return young;
    const old = this.#old.get(k);
    if (old !== undefined) this.set(k, old);
    return old;
  }

  has(k: K): boolean {
    return this.#sizes.has(k);
  }

  set(k: K, v: V): void {
    this.delete(k);
    const size = this.#sizeOf(v);
    if (size > this.#max / 2) return;
    if (this.#youngSize + size > this.#max / 2) {
      for (const dropped of this.#old.keys()) {
        this.#held -= this.#sizes.get(dropped) ?? 0;
        this.#sizes.delete(dropped);
      }
      this.#old = this.#young;
      this.#young = new Map();
      this.#youngSize = 0;
    }
    this.#young.set(k, v);
    this.#sizes.set(k, size);
    this.#youngSize += size;
    this.#held += size;
  }

  delete(k: K): boolean {
    const size = this.#sizes.get(k);
    if (size === undefined) return false;
    this.#sizes.delete(k);
    this.#held -= size;
    if (this.#young.delete(k)) this.#youngSize -= size;
    else this.#old.delete(k);
    return true;
  }

  /** The sizes held now (by `sizeOf`, or one a value). */
  get held(): number {
    return this.#held;
  }

  get size(): number {
    return this.#sizes.size;
  }

  clear(): void {
    for (const map of [this.#young, this.#old, this.#sizes]) map.clear();
    this.#youngSize = 0;
    this.#held = 0;
  }
}
