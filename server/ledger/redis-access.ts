/** The access stages (server/access.ts) on a Redis ledger: docs/redis-ledger.md, The request path on Redis. */
import { AccessStages } from "../access.ts";
import type { Clock } from "../clock.ts";
import type { Ledger } from "./ledger.ts";
import type { RedisCounters } from "./redis-counters.ts";

export class RedisAccess extends AccessStages {
  /** Stops listening for access changes. */
  readonly close: () => void;

  constructor({ ledger, counters, clock }: { ledger: Ledger; counters: RedisCounters; clock: Clock }) {
    super({ findKey: (d) => ledger.findKeyByDigest(d), readAccount: (id) => ledger.readAccount(id) }, counters, clock);
    this.close = ledger.onAccessChange(() => this.clear());
  }
}
