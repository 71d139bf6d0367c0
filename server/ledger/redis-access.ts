/**
 * The access stages (server/access.ts) on a Redis ledger: keys and accounts read through the
 * `Ledger` seam and cached per process, all dropped when the ledger reports an access change
 * (`Ledger.onAccessChange`: within a second, from any process); every counter one Redis script
 * (server/ledger/redis-counters.ts), so any number of serving processes share each limit exactly.
 * Stage 3 is handed the validated page (`prepares`), saving the reservation's round trip.
 */
import { AccessStages, type KeyIdentity } from "../access.ts";
import type { Clock } from "../clock.ts";
import type { Ledger } from "./ledger.ts";
import type { RedisCounters } from "./redis-counters.ts";

export interface RedisAccessDeps {
  ledger: Ledger;
  counters: RedisCounters;
  clock: Clock;
}

export class RedisAccess extends AccessStages {
  readonly #unsubscribe: () => void;

  constructor(deps: RedisAccessDeps) {
    const { ledger } = deps;
    super(
      { findKey: (digest) => ledger.findKeyByDigest(digest), readAccount: (id) => ledger.readAccount(id) },
      deps.counters,
      deps.clock,
    );
    this.#unsubscribe = ledger.onAccessChange(() => this.clear());
  }

  /** Always a promise, as every step of this ledger may be. */
  override async authenticate(req: Request): Promise<KeyIdentity> {
    return super.authenticate(req);
  }

  /** Stops listening for access changes. */
  close(): void {
    this.#unsubscribe();
  }
}
