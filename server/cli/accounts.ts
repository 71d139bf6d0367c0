/**
 * `marquee accounts create|update` (docs/operations.md, The program): the operator's side of plans, verification,
 * budgets, negotiated rates and policies. Flags are validated by the same schema as
 * `/_test/accounts` bodies (server/account-input.ts). Changes reach a running server on its next
 * request (the ledger's access epoch, server/limits/cache.ts).
 */
import type { Account } from "../../db/accounts.ts";
import { PLANS, POLICY_STATES, PORTAL } from "../../db/contract.ts";
import { parseAccountInput } from "../account-input.ts";
import { resolveConfig } from "../config.ts";
import { createSignInLink } from "../portal/sessions.ts";
import { assertEmailFree, listAccounts, showAccount } from "./accounts-admin.ts";
import { type Command, intFlag, oneOf, output, parseFlags, UsageError } from "./args.ts";
import { idArg, LEDGER_FLAG, openOperatorLedger } from "./operator-ledger.ts";
import { readSharedSettings } from "./settings.ts";

export { idArg, LEDGER_FLAG, openOperatorLedger };

const ACCOUNT_FLAGS = {
  ...LEDGER_FLAG,
  email: { type: "string" },
  plan: { type: "string" },
  unverified: { type: "boolean" },
  verified: { type: "boolean" },
  "had-subscription": { type: "boolean" },
  "no-had-subscription": { type: "boolean" },
  "row-budget": { type: "string" },
  "rate-sustained": { type: "string" },
  "rate-burst": { type: "string" },
  policy: { type: "string" },
  "key-limit": { type: "string" },
} as const;

/** `none` clears an optional number; otherwise an integer >= min. */
function optionalCount(name: string, value: string | undefined, min: number): number | null | undefined {
  return value === "none" ? null : intFlag(name, value, min);
}

function flag<T>(
  on: boolean | undefined,
  off: boolean | undefined,
  name: string,
  onValue: T,
  offValue: T,
): T | undefined {
  if (on && off) throw new UsageError(`${name} flags contradict each other`);
  return on ? onValue : off ? offValue : undefined;
}

type Values = {
  [K in keyof typeof ACCOUNT_FLAGS]?: (typeof ACCOUNT_FLAGS)[K] extends { type: "string" } ? string : boolean;
};

function accountFields(values: Values) {
  const input = {
    email: values.email,
    plan: oneOf("plan", values.plan, PLANS),
    verified: flag(values.verified, values.unverified, "--verified/--unverified", true, false),
    hadSubscription: flag(values["had-subscription"], values["no-had-subscription"], "--had-subscription", true, false),
    rowBudget: optionalCount("row-budget", values["row-budget"], 0),
    rateSustained: optionalCount("rate-sustained", values["rate-sustained"], 1),
    rateBurst: optionalCount("rate-burst", values["rate-burst"], 1),
    policy: oneOf("policy", values.policy, POLICY_STATES),
    keyLimit: intFlag("key-limit", values["key-limit"], 0),
  };
  const parsed = parseAccountInput(Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)));
  if (!parsed.ok) throw new UsageError(flagMessage(parsed.message));
  return parsed.fields;
}

const toFlag = (field: string) => `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** `rateSustained: …` → `--rate-sustained: …`, so messages name the flag the operator typed. */
function flagMessage(message: string): string {
  return message
    .replace(/^(\w+):/, (_, field: string) => `${toFlag(field)}:`)
    .replace(/^rateSustained and rateBurst/, "--rate-sustained and --rate-burst");
}

export function describeAccount(a: Account): string {
  const parts = [
    `account ${a.id} <${a.email}>`,
    `plan ${a.plan}`,
    a.verified ? "verified" : "unverified",
    a.hadSubscription ? "had a subscription" : null,
    a.rowBudget !== null ? `row budget ${a.rowBudget}` : null,
    a.rateSustained !== null ? `rate ${a.rateSustained}/min burst ${a.rateBurst}` : null,
    `policy ${a.policy}`,
    a.keyLimit !== PORTAL.defaultKeyLimit ? `key limit ${a.keyLimit}` : null,
  ];
  return parts.filter(Boolean).join(", ");
}

async function create(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { ...ACCOUNT_FLAGS, "allow-duplicate-email": { type: "boolean" } });
  const fields = accountFields(values);
  if (!fields.email) throw new UsageError("--email is required");
  const ledger = await openOperatorLedger(values);
  try {
    await assertEmailFree(ledger, fields.email, values["allow-duplicate-email"] === true);
    const account = await ledger.createAccount(fields, Date.now());
    output(values.json, account, String(account.id));
  } finally {
    await ledger.close();
  }
  return 0;
}

async function update(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, ACCOUNT_FLAGS, true);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const id = idArg("account ID", positionals[0]);
  const fields = accountFields(values);
  const ledger = await openOperatorLedger(values);
  try {
    const account = await ledger.updateAccount(id, fields, Date.now());
    if (!account) throw new Error(`no account ${id}`);
    output(values.json, account, describeAccount(account));
  } finally {
    await ledger.close();
  }
  return 0;
}

/** `accounts sign-in-link ID`: a one-time URL the operator's site hands to the account's owner. */
async function signInLink(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...LEDGER_FLAG, "base-url": { type: "string" } }, true);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const id = idArg("account ID", positionals[0]);
  const { baseUrl } = resolveConfig({ baseUrl: readSharedSettings(values).baseUrl });
  const ledger = await openOperatorLedger(values);
  try {
    const link = await createSignInLink(ledger, baseUrl, id, Date.now());
    if (!link) throw new Error(`no account ${id}`);
    output(values.json, link, link.url);
  } finally {
    await ledger.close();
  }
  return 0;
}

export const accountsCommand: Command = {
  usage: `marquee accounts create --email E [flags] [--allow-duplicate-email]
       marquee accounts update ID [flags]
       marquee accounts list [--email E] [--plan P]
       marquee accounts show ID
       marquee accounts sign-in-link ID [--base-url URL]

  --plan none|basic|business|enterprise|legacy   developer plan (create: none = trial-eligible)
  --unverified | --verified                      email verification (create: verified)
  --had-subscription | --no-had-subscription     a prior developer subscription (no trial;
                                                 a later plan is a replacement subscription)
  --row-budget N|none                            Enterprise rows per rolling 24 hours
  --rate-sustained N --rate-burst N              negotiated rate: N requests a minute, burst N
                                                 (none none: back to the per-key default)
  --policy ok|missing|stale|foreign              the account's access policy row
  --key-limit N                                  active keys the owner may hold in the developer
                                                 portal (create: 10)
  --db PATH  --ledger URL  --config FILE  --json

create prints the new account id (--json: the account); an email already in use is refused
unless --allow-duplicate-email. show prints the plan, policy, verification, the trial (rows left,
end), rows used in the last 24 hours, the rate, the keys, and what a list request with one of its
keys gets now (allowed, or the status and code it is refused with). sign-in-link prints a one-time URL of the
developer portal for the account's owner, valid ${PORTAL.signInLinkTtlMs / 60_000} minutes (--json: {url, expiresAt}); the URL
starts with --base-url, $MARQUEE_BASE_URL or http://localhost:$PORT, as \`serve\` does.`,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "create") return create(rest);
    if (sub === "update") return update(rest);
    if (sub === "sign-in-link") return signInLink(rest);
    if (sub === "list") return listAccounts(rest);
    if (sub === "show") return showAccount(rest);
    throw new UsageError(
      sub
        ? `unknown subcommand '${sub}' (create, update, list, show, sign-in-link)`
        : "expected a subcommand: create, update, list, show, sign-in-link",
    );
  },
};
