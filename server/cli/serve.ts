import { ledgerPathFor } from "../../db/ledger.ts";
import { lockLedgerForServing } from "../../db/serve-lock.ts";
import { createApp, createRouteTable } from "../app.ts";
import { startBackgroundWork } from "../background.ts";
import { resolveConfig } from "../config.ts";
import { createContext } from "../context.ts";
import { listen } from "../listen.ts";
import { type Command, intFlag, parseFlags } from "./args.ts";

export const serveCommand: Command = {
  summary: "serve the API",
  usage: `marquee serve [--port 8080] [--host 0.0.0.0] [--base-url URL] [--demo] [--test-mode]
              [--sync-from SRC] [--sync-interval S] [--snapshot-interval S] [--db PATH]

  --demo        when the replica is empty, load the built-in demo data and create demo
                accounts and keys (printed once)
  --test-mode   enable the /_test/* endpoints (clock, records, accounts, faults, reset)
  --sync-from SRC
                an NDJSON file or http(s):// URL: synced at start, then every --sync-interval
                seconds; a postgres://user:password@host/db URL: its changes are streamed while
                serving (see marquee sync --help), /healthz reports the upstream`,
  async run(argv) {
    const { values } = parseFlags(argv, {
      port: { type: "string" },
      host: { type: "string" },
      "base-url": { type: "string" },
      demo: { type: "boolean" },
      "test-mode": { type: "boolean" },
      "sync-from": { type: "string" },
      "sync-interval": { type: "string" },
      "snapshot-interval": { type: "string" },
    });
    const config = resolveConfig({
      dbPath: values.db,
      port: intFlag("port", values.port),
      host: values.host,
      baseUrl: values["base-url"],
      demo: values.demo,
      testMode: values["test-mode"],
      syncFrom: values["sync-from"],
      syncIntervalS: intFlag("sync-interval", values["sync-interval"], 1),
      snapshotIntervalS: intFlag("snapshot-interval", values["snapshot-interval"], 1),
    });
    // Before anything is read or written: a second server on this ledger is refused here.
    const lock = await lockLedgerForServing(ledgerPathFor(config.dbPath));
    const ctx = await createContext(config);
    await startBackgroundWork(ctx);
    const routes = createRouteTable(ctx);
    const app = createApp(ctx, routes);
    const server = await listen(app, routes, { port: config.port, hostname: config.host });
    console.log(
      `Marquee listening on ${config.baseUrl} (replica ${config.dbPath}${config.testMode ? ", test mode" : ""})`,
    );
    const stop = async () => {
      await server.close();
      ctx.close();
      lock?.close();
      process.exit(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    return new Promise<undefined>(() => {}); // serve until stopped
  },
};
