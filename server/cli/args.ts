/**
 * Small shared pieces of the CLI: flag parsing with one-line errors, and output helpers.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./usage-error.ts";

export { UsageError };

export const COMMON_OPTIONS = {
  db: { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const satisfies ParseArgsConfig["options"];

export function parseFlags<O extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: O,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split("\n")[0]);
  }
}

export function intFlag(name: string, value: string | undefined, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} must be an integer >= ${min}`);
  return Number(value);
}

export function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw new UsageError(`--${name} must be one of ${allowed.join(", ")}`);
  return value as T;
}

/** Prints `data` as JSON with --json, else the human line. */
export function output(asJson: boolean, data: unknown, human: string): void {
  console.log(asJson ? JSON.stringify(data) : human);
}

/** A command's module (server/cli/commands.ts has its name and summary). */
export type Command = {
  usage: string;
  run(argv: string[]): Promise<number | undefined>;
};

/**
 * A long command's signals: the first SIGINT or SIGTERM aborts `controller` (the run stops at its
 * next step and keeps what it committed); a second exits at once with 130. Returns what stops
 * listening.
 */
export function abortOnSignals(controller: AbortController): () => void {
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  };
}
