/**
 * `marquee keys create|revoke|list` (docs/operations.md, The program; docs/api.md, Plans and access). A key is printed once, at creation; the
 * ledger keeps only its SHA-256 digest and a display prefix, so `list` can never show a key.
 * A revocation reaches a running server on its next request (server/limits/cache.ts).
 */
import { KEY_KINDS } from "../../db/contract.ts";
import { issueKey } from "../keys.ts";
import { idArg, LEDGER_FLAG, openOperatorLedger } from "./accounts.ts";
import { type Command, oneOf, output, parseFlags, UsageError } from "./args.ts";
import { findKeys, keyLabel, keyRecord, keyTable } from "./keys-find.ts";

function noExtraArguments(positionals: string[], expected: number): void {
  if (positionals.length > expected) throw new UsageError(`unexpected argument '${positionals[expected]}'`);
}

async function create(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { ...LEDGER_FLAG, account: { type: "string" }, kind: { type: "string" }, label: { type: "string" } },
    true,
  );
  noExtraArguments(positionals, 0);
  const accountId = idArg("--account", values.account);
  const kind = oneOf("kind", values.kind, KEY_KINDS) ?? "live";
  const label = keyLabel(values.label);
  const ledger = await openOperatorLedger(values);
  try {
    if (!(await ledger.readAccount(accountId))) throw new Error(`no account ${accountId}`);
    const issued = await issueKey(ledger, accountId, kind, Date.now(), { label });
    output(values.json, { id: issued.id, accountId, kind, prefix: issued.prefix, label, key: issued.key }, issued.key);
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

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...LEDGER_FLAG, account: { type: "string" } }, true);
  noExtraArguments(positionals, 0);
  const accountId = values.account === undefined ? undefined : idArg("--account", values.account);
  const ledger = await openOperatorLedger(values);
  try {
    if (accountId !== undefined && !(await ledger.readAccount(accountId))) throw new Error(`no account ${accountId}`);
    const keys = accountId === undefined ? await ledger.listAllKeys() : await ledger.listKeys(accountId);
    const empty = accountId === undefined ? "the ledger has no keys" : `account ${accountId} has no keys`;
    output(values.json, keys.map(keyRecord), keys.length ? keyTable(keys) : empty);
  } finally {
    await ledger.close();
  }
  return 0;
}

export const keysCommand: Command = {
  usage: `marquee keys create --account ID [--kind live|builder|legacy] [--label L]
       marquee keys revoke KEY_ID
       marquee keys list [--account ID]
       marquee keys find PREFIX

create prints the key once (only its SHA-256 digest is stored); list shows ids and display
prefixes, never keys, of one account or (without --account) of every account. find names the
key(s) and account(s) behind a display prefix (mq_live_AbC1) or a whole key, which is looked up
by its digest and never printed. Every subcommand takes --db PATH, --ledger URL, --config FILE
and --json.`,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "create") return create(rest);
    if (sub === "revoke") return revoke(rest);
    if (sub === "list") return list(rest);
    if (sub === "find") return findKeys(rest);
    throw new UsageError(
      sub
        ? `unknown subcommand '${sub}' (create, revoke, list, find)`
        : "expected a subcommand: create, revoke, list, find",
    );
  },
};
