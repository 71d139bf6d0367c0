// What any Marquee instance must do before its first answer, and no more (test/bench/startup.ts):
// take the ledger's lock, open (and on first use create) the replica and the ledger with
// Marquee's own storage modules, then answer from `Bun.serve` with the replica's counts.
//   bun test/bench/startup/storage-floor.ts <folder>
import { join } from "node:path";
import { openLedger } from "../../../db/ledger.ts";
import { openReplica, readReplicaStats } from "../../../db/replica.ts";
import { lockLedgerForServing } from "../../../db/serve-lock.ts";

const dir = process.argv[2];
await lockLedgerForServing(join(dir, "marquee.ledger.db"));
const replica = await openReplica(join(dir, "marquee.db"));
await openLedger(join(dir, "marquee.ledger.db"));
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => Response.json(readReplicaStats(replica)),
});
console.log(`listening on http://127.0.0.1:${server.port}`);
