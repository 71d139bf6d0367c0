#!/usr/bin/env bun
/**
 * `marquee` CLI entry (docs/operations.md, The program). Each command lives in server/cli/.
 */
import type { CommandEntry } from "./cli/commands.ts";

function usage(commands: Record<string, CommandEntry>): string {
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
  const [given, ...rest] = argv;
  // `marquee --version` is `marquee version` (docs/operations.md, Version).
  const name = given === "--version" || given === "-v" ? "version" : given;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    const { commands } = await import("./cli/commands.ts");
    console.log(usage(commands));
    return name ? 0 : 1;
  }
  const help = rest.includes("--help") || rest.includes("-h");
  if (options.ownProcess && !help) {
    // Before the commands' modules load: a restart then costs only the runtime's start.
    const { purgeDelayFor, restartWithPurgeDelay } = await import("./cli/allocator.ts");
    const purgeDelay = purgeDelayFor(name, rest, process.env);
    if (purgeDelay !== undefined) await restartWithPurgeDelay(purgeDelay);
    (await import("./ties.ts")).stopWhenWrapperGone();
  }
  const { commands } = await import("./cli/commands.ts");
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    console.error(`marquee: unknown command '${name}' (see 'marquee --help')`);
    return 2;
  }
  const command = await entry.load();
  if (help) {
    console.log(`${entry.summary}\n\nusage: ${command.usage}`);
    return 0;
  }
  try {
    return (await command.run(rest)) ?? 0;
  } catch (err) {
    const { UsageError } = await import("./cli/usage-error.ts");
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
