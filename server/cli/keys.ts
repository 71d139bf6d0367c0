/**
 * `marquee keys create|revoke|list` (docs/operations.md, The program; docs/api.md, Plans and access). A key is printed once, at creation; the
 * ledger keeps only its SHA-256 digest and a display prefix, so `list` can never show a key.
 * A revocation reaches a running server on its next request (server/limits/cache.ts).
 */
import type { KeyRow } from "../../db/accounts.ts";
import { KEY_KINDS } from "../../db/contract.ts";
import { issueKey } from "../keys.ts";
import { idArg, LEDGER_FLAG, openOperatorLedger } from "./accounts.ts";
import { type Command, oneOf, output, parseFlags, UsageError } from "./args.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function noExtraArguments(positionals: string[], expected: number): void {
  if (positionals.length > expected) throw new UsageError(`unexpected argument '${positionals[expected]}'`);
}

async function create(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { ...LEDGER_FLAG, account: { type: "string" }, kind: { type: "string" } },
    true,
  );
  noExtraArguments(positionals, 0);
  const accountId = idArg("--account", values.account);
  const kind = oneOf("kind", values.kind, KEY_KINDS) ?? "live";
  const ledger = await openOperatorLedger(values);
  try {
    if (!(await ledger.readAccount(accountId))) throw new Error(`no account ${accountId}`);
    const issued = await issueKey(ledger, accountId, kind, Date.now());
    output(values.json, { id: issued.id, accountId, kind, prefix: issued.prefix, key: issued.key }, issued.key);
    if (!values.json)
      console.error(`key ${issued.id} (${issued.prefix}…) for account ${accountId}: shown once, store it now`);
  } finally {
    await ledger.close();
  }
  return 0;
}

async function revoke(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, LEDGER_FLAG, true);
  noExtraArguments(positionals, 1);
  const keyId = idArg("KEY_ID", positionals[0]);
  const ledger = await openOperatorLedger(values);
  try {
    if (!(await ledger.revokeKey(keyId, Date.now()))) throw new Error(`no key ${keyId}`);
    output(values.json, { id: keyId, revoked: true }, `revoked key ${keyId}`);
  } finally {
    await ledger.close();
  }
  return 0;
}

function keyLine(k: KeyRow): string {
  const status = k.revokedMs === null ? "active" : `revoked ${iso(k.revokedMs)}`;
  return [String(k.id).padEnd(6), k.kind.padEnd(8), `${k.prefix}…`.padEnd(18), iso(k.createdMs), status].join("  ");
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...LEDGER_FLAG, account: { type: "string" } }, true);
  noExtraArguments(positionals, 0);
  const accountId = idArg("--account", values.account);
  const ledger = await openOperatorLedger(values);
  try {
    if (!(await ledger.readAccount(accountId))) throw new Error(`no account ${accountId}`);
    const keys = await ledger.listKeys(accountId);
    const rows = keys.map((k) => ({ ...k, createdAt: iso(k.createdMs), revokedAt: iso(k.revokedMs) }));
    const header = ["id".padEnd(6), "kind".padEnd(8), "prefix".padEnd(18), "created".padEnd(24), "status"].join("  ");
    output(
      values.json,
      rows,
      keys.length ? [header, ...keys.map(keyLine)].join("\n") : `account ${accountId} has no keys`,
    );
  } finally {
    await ledger.close();
  }
  return 0;
}

export const keysCommand: Command = {
  usage: `marquee keys create --account ID [--kind live|builder|legacy]
       marquee keys revoke KEY_ID
       marquee keys list --account ID

create prints the key once (only its SHA-256 digest is stored); list shows ids and display
prefixes, never keys. Every subcommand takes --db PATH and --json.`,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "create") return create(rest);
    if (sub === "revoke") return revoke(rest);
    if (sub === "list") return list(rest);
    throw new UsageError(
      sub ? `unknown subcommand '${sub}' (create, revoke, list)` : "expected a subcommand: create, revoke, list",
    );
  },
};
