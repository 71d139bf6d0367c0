/**
 * Values bounded by their bytes in two generations: a read looks in the young one, then in the old one, moving a
 * value found there into the young one; when the young one holds half the bytes it becomes the old one and the old
 * one is dropped. A hit costs one or two Map reads where an exact least-recently-used order updates a list on every
 * read (docs/perf-history.md, "Round 30").
 */
export class TwoGenerations<K, V> {
  #young = new Map<K, V>();
  #old = new Map<K, V>();
  #youngBytes = 0;
  #oldBytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly bytesOf: (v: V) => number,
  ) {}

  get(k: K): V | undefined {
    const young = this.#young.get(k);
    if (young !== undefined) return young;
    const old = this.#old.get(k);
    if (old !== undefined) this.set(k, old);
    return old;
  }

  set(k: K, v: V): void {
    const old = this.#old.get(k);
    if (old !== undefined && this.#old.delete(k)) this.#oldBytes -= this.bytesOf(old);
    const young = this.#young.get(k);
    if (young !== undefined) this.#youngBytes -= this.bytesOf(young);
    this.#young.set(k, v);
    this.#youngBytes += this.bytesOf(v);
    if (this.#youngBytes < this.maxBytes / 2) return;
    this.#old = this.#young;
    this.#oldBytes = this.#youngBytes;
    this.#young = new Map();
    this.#youngBytes = 0;
  }

  has(k: K): boolean {
    return this.#young.has(k) || this.#old.has(k);
  }

  /** Bytes held now (by `bytesOf`). */
  get bytes(): number {
    return this.#youngBytes + this.#oldBytes;
  }

  get size(): number {
    return this.#young.size + this.#old.size;
  }

  clear(): void {
    this.#young.clear();
    this.#old.clear();
    this.#youngBytes = 0;
    this.#oldBytes = 0;
  }
}
