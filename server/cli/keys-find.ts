/**
 * `marquee keys find PREFIX` and the key listings of `keys list` and `accounts show`
 * (docs/operations.md, Accounts and keys). Listings show ids and display prefixes, never keys.
 */
import * as v from "valibot";
import type { KeyListing } from "../../db/accounts.ts";
import { digestKey, parseKey } from "../keys.ts";
import { CreateDeveloperKeyRequest } from "../portal/schemas.ts";
import { output, parseFlags, UsageError } from "./args.ts";
import { LEDGER_FLAG, openOperatorLedger } from "./operator-ledger.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A key as `--json` shows it. */
export const keyRecord = (k: KeyListing) => ({ ...k, createdAt: iso(k.createdMs), revokedAt: iso(k.revokedMs) });

/** `--label L`, held to the rule the developer portal holds an owner's labels to. */
export function keyLabel(label: string | undefined): string | null {
  if (label === undefined) return null;
  const parsed = v.safeParse(CreateDeveloperKeyRequest, { label });
  if (!parsed.success) throw new UsageError(`--${parsed.issues[0].message}`);
  return parsed.output.label || null;
}

export function keyTable(keys: readonly KeyListing[]): string {
  const row = (cells: string[]) =>
    [cells[0].padEnd(6), cells[1].padEnd(8), cells[2].padEnd(8), cells[3].padEnd(18), cells[4].padEnd(24), cells[5]]
      .join("  ")
      .trimEnd();
  const lines = keys.map((k) => {
    const status = k.revokedMs === null ? "active" : `revoked ${iso(k.revokedMs)}`;
    const by = k.issuedBy === "owner" ? ", by the owner" : "";
    const label = k.label ? `  "${k.label}"` : "";
    return row([String(k.id), String(k.accountId), k.kind, `${k.prefix}…`, iso(k.createdMs)!, status + by + label]);
  });
  return [row(["id", "account", "kind", "prefix", "created", "status"]), ...lines].join("\n");
}

/**
 * The keys a PREFIX names: a whole key is found by its digest (the one lookup that cannot be
 * ambiguous); anything else matches keys whose display prefix starts with it, or that it starts
 * with (a longer part of a key, say, as a client reads it off their configuration).
 */
export async function findKeys(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, LEDGER_FLAG, true);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const given = positionals[0];
  if (!given) throw new UsageError("PREFIX is required (a display prefix such as mq_live_AbC1, or a whole key)");
  if (given.length < 4) throw new UsageError("PREFIX must be at least 4 characters");
  const ledger = await openOperatorLedger(values);
  try {
    let found: KeyListing[];
    if (parseKey(given) !== null) {
      const row = await ledger.findKeyByDigest(digestKey(given));
      const key = row && (await ledger.readAccountKey(row.accountId, row.id));
      found = key ? [key] : [];
    } else {
      found = (await ledger.listAllKeys()).filter((k) => k.prefix.startsWith(given) || given.startsWith(k.prefix));
    }
    const shown = parseKey(given) !== null ? "that key" : given;
    output(values.json, found.map(keyRecord), found.length ? keyTable(found) : `no key matches ${shown}`);
    return found.length ? 0 : 1;
  } finally {
    await ledger.close();
  }
}
