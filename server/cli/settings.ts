/**
 * A command's flags from three places (docs/operations.md, Configuration): the command line,
 * then the environment (`MARQUEE_<FLAG>`: upper case, dashes to underscores), then the
 * configuration file (`--config FILE` or `MARQUEE_CONFIG`). Generic over the command's flag
 * table: a flag added to `serve` or `sync` is read from all three without more code.
 *
 * Where a value came from is kept (`origins`), so a message about it names the flag, the
 * variable or the file's line it came from; a URL given by environment or file is never on a
 * command line, so `ps` never shows its password.
 */
import type { ParseArgsConfig } from "node:util";
import { environment } from "../config.ts";
import {
  type ConfigEntry,
  type ConfigFile,
  type ConfigSection,
  readConfigFile,
  type SHARED_SETTINGS,
} from "../config-file.ts";
import { COMMON_OPTIONS, parseFlags, UsageError } from "./args.ts";

type FlagTable = NonNullable<ParseArgsConfig["options"]>;
type Env = Record<string, string | undefined>;

/** Names kept from before every flag had its variable: read after the generic one. */
const LEGACY_VARIABLES: Record<string, readonly string[]> = { port: ["PORT"] };

/** Flags never read from the environment or a file. */
const COMMAND_LINE_ONLY = new Set(["help", "config"]);

export const CONFIG_FLAG = { config: { type: "string" } } as const;

/** `sync-from` → `MARQUEE_SYNC_FROM`. */
export const variableFor = (flag: string): string => `MARQUEE_${flag.toUpperCase().replaceAll("-", "_")}`;

export interface Settings<V> {
  values: V;
  positionals: string[];
  /** For each flag that has a value: `--ledger`, `MARQUEE_LEDGER` or `ledger (FILE line 3)`. */
  origins: Record<string, string>;
}

/**
 * Parses `argv` against `options` (the flag table of the command named `section`), then fills
 * each flag not given from the environment, then from the file's `[section]` and its shared
 * settings. Defaults apply last.
 */
export function parseSettings<O extends FlagTable>(
  section: ConfigSection,
  argv: string[],
  options: O,
  env: Env = environment(),
): Settings<ReturnType<typeof parseFlags<O & typeof CONFIG_FLAG>>["values"]> {
  const table: FlagTable = { ...COMMON_OPTIONS, ...options, ...CONFIG_FLAG };
  const withoutDefaults = Object.fromEntries(
    Object.entries(table).map(([name, { default: _default, ...option }]) => [name, option]),
  ) as FlagTable;
  const parsed = parseFlags(argv, withoutDefaults);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const origins: Record<string, string> = {};
  const file = openConfig(values.config as string | undefined, env);
  const own = file?.sections.get(section);
  for (const [key, entry] of own ?? []) {
    if (!(key in table) || COMMAND_LINE_ONLY.has(key))
      throw new UsageError(`${file!.path} line ${entry.line}: marquee ${section} has no --${key}`);
  }
  for (const [name, option] of Object.entries(table)) {
    if (COMMAND_LINE_ONLY.has(name)) continue;
    const picked = pick(name, option.type, values[name], env, file, own);
    if (picked) [values[name], origins[name]] = [picked.value, picked.origin];
    else if (option.default !== undefined) values[name] = option.default as string | boolean;
  }
  return { values: values as never, positionals: parsed.positionals, origins };
}

/**
 * The shared settings (`--db`, `--ledger`, `--base-url`) of a command that takes no other setting from the
 * environment or the file: the operator's `accounts`, `keys`, `backup` and `ledger` commands.
 */
export function readSharedSettings(
  given: { db?: string; ledger?: string; "base-url"?: string; config?: string },
  env: Env = environment(),
): { db?: string; ledger?: string; baseUrl?: string; origins: Record<string, string> } {
  const file = openConfig(given.config, env);
  const origins: Record<string, string> = {};
  const read = (name: (typeof SHARED_SETTINGS)[number]) => {
    const picked = pick(name, "string", given[name], env, file);
    if (picked) origins[name] = picked.origin;
    return picked?.value as string | undefined;
  };
  return { db: read("db"), ledger: read("ledger"), baseUrl: read("base-url"), origins };
}

/** One flag's value and where it came from: the command line, then its variable, then the file. */
function pick(
  name: string,
  type: "string" | "boolean",
  given: string | boolean | undefined,
  env: Env,
  file: ConfigFile | null,
  own?: Map<string, ConfigEntry>,
): { value: string | boolean; origin: string } | null {
  if (given !== undefined) return { value: given, origin: `--${name}` };
  const variable = [variableFor(name), ...(LEGACY_VARIABLES[name] ?? [])].find((v) => env[v]);
  if (variable) return { value: fromVariable(variable, env[variable]!, type), origin: variable };
  const entry = own?.get(name) ?? file?.shared.get(name);
  if (entry) return { value: fromFile(name, entry, type, file!), origin: `${name} (${file!.path} line ${entry.line})` };
  return null;
}

function openConfig(given: string | undefined, env: Env): ConfigFile | null {
  const path = given ?? (env.MARQUEE_CONFIG || undefined);
  if (path === undefined) return null;
  try {
    return readConfigFile(path);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function fromVariable(variable: string, raw: string, type: "string" | "boolean"): string | boolean {
  if (type === "string") return raw;
  const v = raw.toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw new UsageError(`${variable} must be 1 or 0 (true or false), not ${raw}`);
}

function fromFile(name: string, entry: ConfigEntry, type: "string" | "boolean", file: ConfigFile): string | boolean {
  if (type === "boolean" && typeof entry.value !== "boolean")
    throw new UsageError(`${file.path} line ${entry.line}: ${name} must be true or false`);
  if (type === "string" && typeof entry.value !== "string")
    throw new UsageError(`${file.path} line ${entry.line}: ${name} must be a string or a number, not ${entry.value}`);
  return entry.value;
}
