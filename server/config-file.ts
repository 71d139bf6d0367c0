/**
 * The configuration file, `--config FILE` (docs/operations.md, Configuration file): a flat subset
 * of TOML. `name = value` lines, where `name` is a flag's long name without its dashes and
 * `value` a "double-quoted" or 'single-quoted' string, an integer, or true/false; `#` starts a
 * comment. Settings before any section are the shared ones (`db`, `ledger`, `base-url`), read
 * by every command that takes them; `[serve]` and `[sync]` hold the settings of one command.
 * Anything else is refused with its line, so a typo never passes silently.
 */
import { readFileSync } from "node:fs";

/** Commands whose every flag the file may set, one section each. */
export const CONFIG_SECTIONS = ["serve", "sync"] as const;
export type ConfigSection = (typeof CONFIG_SECTIONS)[number];

/** Settings the file may hold outside a section: several commands take them. */
export const SHARED_SETTINGS = ["db", "ledger", "base-url"] as const;

export interface ConfigEntry {
  value: string | boolean;
  line: number;
}

export interface ConfigFile {
  path: string;
  shared: Map<string, ConfigEntry>;
  sections: Map<ConfigSection, Map<string, ConfigEntry>>;
}

export class ConfigFileError extends Error {}

const KEY = /^[a-z][a-z0-9-]*$/;

export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigFileError(`cannot read the configuration file ${path}: ${(err as NodeJS.ErrnoException).code}`);
  }
  return parseConfigFile(text, path);
}

export function parseConfigFile(text: string, path: string): ConfigFile {
  const file: ConfigFile = { path, shared: new Map(), sections: new Map() };
  let section: Map<string, ConfigEntry> | null = null;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = i + 1;
    const fail = (why: string): never => {
      throw new ConfigFileError(`${path} line ${line}: ${why}`);
    };
    const text = lines[i].trim();
    if (text === "" || text.startsWith("#")) continue;
    const header = /^\[\s*([^\]]*?)\s*\]\s*(#.*)?$/.exec(text);
    if (header) {
      const name = header[1] as ConfigSection;
      if (!CONFIG_SECTIONS.includes(name))
        fail(`unknown section [${header[1]}]; sections are ${CONFIG_SECTIONS.map((s) => `[${s}]`).join(" and ")}`);
      if (file.sections.has(name)) fail(`section [${name}] appears twice`);
      section = new Map();
      file.sections.set(name, section);
      continue;
    }
    const eq = text.indexOf("=");
    if (eq < 0) fail("expected name = value");
    const key = text.slice(0, eq).trim();
    if (!KEY.test(key)) fail(`"${key}" is not a setting name (a flag's name without its dashes, e.g. sync-from)`);
    const target = section ?? file.shared;
    if (section === null && !(SHARED_SETTINGS as readonly string[]).includes(key))
      fail(
        `${key} belongs in a section ([serve] or [sync]); before any section only ${SHARED_SETTINGS.join(", ")} are allowed`,
      );
    if (target.has(key)) fail(`${key} is set twice`);
    target.set(key, { value: parseValue(text.slice(eq + 1).trim(), fail), line });
  }
  return file;
}

function parseValue(raw: string, fail: (why: string) => never): string | boolean {
  const comment = (rest: string) => {
    if (rest.trim() !== "" && !rest.trim().startsWith("#")) fail(`unexpected text after the value: ${rest.trim()}`);
  };
  if (raw.startsWith('"')) {
    // A TOML basic string has JSON's escapes.
    const end = closingQuote(raw);
    if (end < 0) fail("a string that is never closed");
    comment(raw.slice(end + 1));
    try {
      return JSON.parse(raw.slice(0, end + 1)) as string;
    } catch {
      return fail("a string with an invalid escape");
    }
  }
  if (raw.startsWith("'")) {
    const end = raw.indexOf("'", 1);
    if (end < 0) fail("a string that is never closed");
    comment(raw.slice(end + 1));
    return raw.slice(1, end);
  }
  const bare = raw.split("#")[0].trim();
  if (bare === "true") return true;
  if (bare === "false") return false;
  if (/^-?\d+$/.test(bare)) return bare;
  return fail(`a value is a "quoted string", an integer, true or false; not ${bare === "" ? "nothing" : bare}`);
}

/** Index of the quote that closes the basic string starting at 0; -1 when none does. */
function closingQuote(raw: string): number {
  for (let i = 1; i < raw.length; i++) {
    if (raw[i] === "\\") i++;
    else if (raw[i] === '"') return i;
  }
  return -1;
}
