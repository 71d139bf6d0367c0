/**
 * `marquee sync --from-api URL` (docs/upstream-records.md, A replica of another deployment): a
 * replica of the events another deployment's list endpoint selects for the URL's filters, kept by
 * passes over that endpoint, one, or one every `--interval` seconds with `--follow`.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SYNC } from "../../db/contract.ts";
import { assertSourceKind, openReplica } from "../../db/replica.ts";
import { type PassSummary, runApiPass } from "../../sync/api/pass.ts";
import { AGGREGATORS_NOTE, createPassProgress, formatPassSummary } from "../../sync/api/report.ts";
import { sleep } from "../../sync/source-lines.ts";
import { parseApiScope } from "../api-scope.ts";
import { readUpstreamKey, resolveConfig } from "../config.ts";
import { abortOnSignals } from "./args.ts";
import { budgetReserveFlag, intervalFlag } from "./sync-api-flags.ts";

export interface ApiSyncFlags {
  db?: string;
  json: boolean;
  follow: boolean;
  interval?: string;
  budgetReserve?: string;
  aggregators: boolean;
  upstreamKeyFile?: string;
}

export async function runApiSync(url: string, flags: ApiSyncFlags): Promise<number> {
  const scope = parseApiScope(url);
  const key = readUpstreamKey(flags.upstreamKeyFile);
  const reserve = budgetReserveFlag(flags.budgetReserve);
  const intervalS = intervalFlag(flags.interval);
  const { dbPath } = resolveConfig({ dbPath: flags.db });
  if (dbPath !== ":memory:") mkdirSync(dirname(dbPath), { recursive: true });
  const db = await openReplica(dbPath);
  db.exec(`PRAGMA busy_timeout = ${SYNC.cliBusyTimeoutMs}`);
  const controller = new AbortController();
  // First signal: the pass stops at its next step and removes nothing. Second: exit now.
  const release = abortOnSignals(controller);
  try {
    assertSourceKind(db, "api");
    if (flags.aggregators && !scope.excludesAggregators) console.error(`marquee sync: ${AGGREGATORS_NOTE}`);
    const bar = createPassProgress(process.stderr, `syncing ${scope.display}`);
    const report = (summary: PassSummary) => {
      bar.clear();
      console.log(flags.json ? JSON.stringify(summary) : formatPassSummary(summary));
    };
    let capped = false;
    for (;;) {
      const summary = await runApiPass(db, scope, {
        key,
        reserve,
        aggregators: flags.aggregators,
        signal: controller.signal,
        now: Date.now,
        capped,
        onProgress: bar.update,
        notice: (line) => {
          bar.clear();
          console.error(`marquee sync: ${line}`);
        },
      });
      capped = summary.capped;
      report(summary);
      if (summary.cutShort?.reason === "signal") return 130;
      // Retrying cannot change a refusal (a key, a plan, an account): stop, following or not.
      if (summary.cutShort?.reason === "refused") {
        console.error(`marquee sync: ${summary.cutShort.message}`);
        return 1;
      }
      if (!flags.follow) return summary.complete ? 0 : 1;
      // Passes start every --interval seconds; one that took longer is followed at once.
      await sleep(Math.max(0, intervalS * 1000 - summary.elapsedMs), controller.signal);
      if (controller.signal.aborted) return 0; // stopped between passes: nothing was cut short
    }
  } finally {
    release();
    db.close();
  }
}
