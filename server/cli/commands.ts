/**
 * The CLI's commands besides `serve`, one module each.
 */

import { accountsCommand } from "./accounts.ts";
import type { Command } from "./args.ts";
import { demoDataCommand } from "./demo-data.ts";
import { keysCommand } from "./keys.ts";
import { syncCommand } from "./sync.ts";
import { upstreamSchemaCommand } from "./upstream-schema.ts";

export const extraCommands: Record<string, Command> = {
  sync: syncCommand,
  "upstream-schema": upstreamSchemaCommand,
  "demo-data": demoDataCommand,
  accounts: accountsCommand,
  keys: keysCommand,
};
