/**
 * The CLI's commands: each name with its one-line summary and how to load its module. A command's
 * module is loaded only when that command runs (or its --help is asked for), so `marquee --help`
 * and every command load nothing another command needs (docs/operations.md, The program).
 */
import type { Command } from "./args.ts";

export interface CommandEntry {
  summary: string;
  load(): Promise<Command>;
}

export const commands: Record<string, CommandEntry> = {
  serve: { summary: "serve the API", load: async () => (await import("./serve.ts")).serveCommand },
  sync: {
    summary: "pull upstream records into the replica",
    load: async () => (await import("./sync.ts")).syncCommand,
  },
  "upstream-schema": {
    summary: "print the PostgreSQL DDL of the upstream tables",
    load: async () => (await import("./upstream-schema.ts")).upstreamSchemaCommand,
  },
  "demo-data": {
    summary: "write a deterministic demo record stream",
    load: async () => (await import("./demo-data.ts")).demoDataCommand,
  },
  accounts: {
    summary: "create, change, list and show accounts; sign-in links to their developer portal",
    load: async () => (await import("./accounts.ts")).accountsCommand,
  },
  keys: { summary: "issue, revoke, list and find API keys", load: async () => (await import("./keys.ts")).keysCommand },
  backup: {
    summary: "copy the replica and the ledger while the server runs, and say how to restore them",
    load: async () => (await import("./backup.ts")).backupCommand,
  },
  ledger: {
    summary: "copy the SQLite ledger into an empty Redis ledger (moving to several servers)",
    load: async () => (await import("./ledger.ts")).ledgerCommand,
  },
  version: {
    summary: "print the version, the commit when known, and the runtime",
    load: async () => (await import("./version.ts")).versionCommand,
  },
};
