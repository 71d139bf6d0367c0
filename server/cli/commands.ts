/**
 * The CLI's commands, one module each. The entry (server/main.ts) loads this module only after
 * it has decided whether to restart with another allocator setting.
 */

import { accountsCommand } from "./accounts.ts";
import type { Command } from "./args.ts";
import { backupCommand } from "./backup.ts";
import { demoDataCommand } from "./demo-data.ts";
import { keysCommand } from "./keys.ts";
import { ledgerCommand } from "./ledger.ts";
import { serveCommand } from "./serve.ts";
import { syncCommand } from "./sync.ts";
import { upstreamSchemaCommand } from "./upstream-schema.ts";
import { versionCommand } from "./version.ts";

export { UsageError } from "./args.ts";

export const commands: Record<string, Command> = {
  serve: serveCommand,
  sync: syncCommand,
  "upstream-schema": upstreamSchemaCommand,
  "demo-data": demoDataCommand,
  accounts: accountsCommand,
  keys: keysCommand,
  backup: backupCommand,
  ledger: ledgerCommand,
  version: versionCommand,
};
