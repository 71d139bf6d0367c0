#!/usr/bin/env bun
/**
 * `marquee` CLI entry (docs/operations.md, The program). Each command lives in server/cli/.
 */
import { restartWithPurgeDelay } from "./cli/allocator.ts";
import { type Command, UsageError } from "./cli/args.ts";
import { extraCommands } from "./cli/commands.ts";
import { serveCommand } from "./cli/serve.ts";

const commands: Record<string, Command> = { serve: serveCommand, ...extraCommands };

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return [
    "usage: marquee <command> [flags]",
    "",
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    "",
    "Every command takes --db PATH (default $MARQUEE_DB or ./data/marquee.db), --json and --help.",
  ].join("\n");
}

/**
 * Runs one command. `ownProcess`: the process is this program's own (its entry is this file), so
 * a command that asks for another allocator purge delay may restart it in place
 * (server/cli/allocator.ts); code that calls main() in a process of its own never has that
 * process replaced.
 */
export async function main(argv: string[], options: { ownProcess?: boolean } = {}): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    console.error(`marquee: unknown command '${name}' (see 'marquee --help')`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(`${command.summary}\n\nusage: ${command.usage}`);
    return 0;
  }
  const purgeDelay = options.ownProcess ? command.purgeDelay?.(rest, process.env) : undefined;
  if (purgeDelay !== undefined) await restartWithPurgeDelay(purgeDelay);
  try {
    return (await command.run(rest)) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`marquee ${name}: ${err.message}`);
      return 2;
    }
    console.error(`marquee ${name}: ${(err as Error).message}`);
    return 1;
  }
}

if (import.meta.main) {
  main(process.argv.slice(2), { ownProcess: true }).then((code) => {
    if (code !== undefined) process.exitCode = code;
  });
}
