/**
 * The one clock all server code reads for "now" (docs/api.md, Test mode). In production it is the wall
 * clock. In test mode the first `set` or `advance` freezes it, and from then on it moves only
 * when told, so boundaries such as "exactly 7 days" are reproducible.
 */
export interface Clock {
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
  /** Follows the source (the wall clock) again. */
  unfreeze(): void;
  readonly frozen: boolean;
}

export function createClock(source: () => number = Date.now): Clock {
  let fixed: number | undefined;
  return {
    now: () => fixed ?? source(),
    set(ms) {
      fixed = ms;
    },
    advance(ms) {
      fixed = (fixed ?? source()) + ms;
    },
    unfreeze() {
      fixed = undefined;
    },
    get frozen() {
      return fixed !== undefined;
    },
  };
}

/**
 * The instants the test clock may show: what an RFC 3339 date-time with a four-digit year writes,
 * from the Unix epoch on (docs/api.md, Test mode). A move outside it is refused and changes nothing.
 */
export const TEST_CLOCK_RANGE = { minMs: 0, maxMs: Date.UTC(9999, 11, 31, 23, 59, 59, 999) } as const;

export const inTestClockRange = (ms: number): boolean =>
  Number.isFinite(ms) && ms >= TEST_CLOCK_RANGE.minMs && ms <= TEST_CLOCK_RANGE.maxMs;
