/**
 * The one clock all server code reads for "now" (docs/api.md, Test mode). In production it is the wall
 * clock. In test mode the first `set` or `advance` freezes it, and from then on it moves only
 * when told, so boundaries such as "exactly 7 days" are reproducible.
 */
export interface Clock {
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
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
    get frozen() {
      return fixed !== undefined;
    },
  };
}
