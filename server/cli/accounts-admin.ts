/**
 * `marquee accounts list` and `marquee accounts show ID` (docs/operations.md, Accounts and keys):
 * what the ledger holds of an account, and what a list request with one of its keys would get
 * right now, decided by the same code the server decides it with (server/limits/grant.ts), so
 * "why did this client get that code?" is answered from the ledger.
 */
import type { Account } from "../../db/accounts.ts";
import { DAY_MS, PLANS, TIERS, TRIAL } from "../../db/contract.ts";
import { type Trial, trialExpiresMs, trialState } from "../../db/trials.ts";
import { ApiError } from "../errors.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { effectiveTier, resolveGrant } from "../limits/grant.ts";
import { bucketFor } from "../limits/rate.ts";
import { oneOf, output, parseFlags, UsageError } from "./args.ts";
import { keyRecord, keyTable } from "./keys-find.ts";
import { idArg, LEDGER_FLAG, openOperatorLedger } from "./operator-ledger.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const n = (x: number) => x.toLocaleString("en-US");

export async function listAccounts(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { ...LEDGER_FLAG, email: { type: "string" }, plan: { type: "string" } },
    true,
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const plan = oneOf("plan", values.plan, PLANS);
  const ledger = await openOperatorLedger(values);
  try {
    const accounts = await ledger.listAccounts({ email: values.email, plan });
    const line = (a: Account) =>
      [
        String(a.id).padEnd(6),
        a.plan.padEnd(10),
        a.policy.padEnd(7),
        (a.verified ? "verified" : "unverified").padEnd(10),
        iso(a.createdMs)!.padEnd(24),
        a.email,
      ].join("  ");
    const header = ["id".padEnd(6), "plan".padEnd(10), "policy".padEnd(7), "verified".padEnd(10), "created".padEnd(24)];
    output(
      values.json,
      accounts.map((a) => ({ ...a, createdAt: iso(a.createdMs), updatedAt: iso(a.updatedMs) })),
      accounts.length ? [[...header, "email"].join("  "), ...accounts.map(line)].join("\n") : "no accounts match",
    );
  } finally {
    await ledger.close();
  }
  return 0;
}

/** What `accounts show` reports; `--json` prints it as is. */
export interface AccountReport {
  account: Account & { createdAt: string | null; updatedAt: string | null };
  /** What a list request with a live key of this account gets now (docs/api.md, Plans and access). */
  access: { allowed: true; tier: string } | { allowed: false; status: number; code: string; message: string };
  trial: {
    state: "not started" | "active" | "expired" | "exhausted" | "not eligible";
    rowsUsed: number;
    rowsLeft: number;
    startedAt: string | null;
    expiresAt: string | null;
    exhaustedAt: string | null;
  };
  rowsUsed24h: number;
  /** Rolling 24-hour row budget; null when the plan has none. */
  rowBudget: number | null;
  rate: { perMinute: number; burst: number; scope: "account" | "key" };
  keys: ReturnType<typeof keyRecord>[];
}

export async function readAccountReport(ledger: Ledger, id: number, nowMs: number): Promise<AccountReport | null> {
  const account = await ledger.readAccount(id);
  if (!account) return null;
  const [trial, rowsUsed24h, keys] = await Promise.all([
    ledger.readTrial(id),
    ledger.rowsDelivered(id, DAY_MS, nowMs),
    ledger.listKeys(id),
  ]);
  let access: AccountReport["access"];
  try {
    access = { allowed: true, tier: resolveGrant(account, trial, nowMs).tier };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    access = { allowed: false, status: err.status, code: err.code, message: err.message };
  }
  const tier = account.plan === "none" ? null : effectiveTier(account);
  const bucket = bucketFor(account, 0, access.allowed && access.tier === "trial");
  return {
    account: { ...account, createdAt: iso(account.createdMs), updatedAt: iso(account.updatedMs) },
    access,
    trial: describeTrial(account, trial, nowMs),
    rowsUsed24h,
    rowBudget: tier === null ? null : tier === "enterprise" ? account.rowBudget : TIERS[tier].rowBudget24h,
    rate: {
      perMinute: Math.round(bucket.refillPerSecond * 60),
      burst: bucket.capacity,
      scope: bucket.bucket.startsWith("account:") ? "account" : "key",
    },
    keys: keys.map(keyRecord),
  };
}

function describeTrial(account: Account, trial: Trial | undefined, nowMs: number): AccountReport["trial"] {
  const base = {
    rowsUsed: trial?.rowsUsed ?? 0,
    rowsLeft: Math.max(0, TRIAL.rows - (trial?.rowsUsed ?? 0)),
    startedAt: iso(trial?.startedMs ?? null),
    expiresAt: trial ? iso(trialExpiresMs(trial)) : null,
    exhaustedAt: iso(trial?.exhaustedMs ?? null),
  };
  if (trial) return { state: trialState(trial, nowMs), ...base };
  const eligible = account.plan === "none" && !account.hadSubscription;
  return { state: eligible ? "not started" : "not eligible", ...base };
}

function renderReport(r: AccountReport): string {
  const a = r.account;
  const t = r.trial;
  const trialLine = {
    "not eligible": `not eligible (${a.plan !== "none" ? `plan ${a.plan}` : "had a subscription"})`,
    "not started": `not started: ${n(TRIAL.rows)} rows over ${TRIAL.days} days from the first valid request${a.verified ? "" : " (once the email is verified)"}`,
    active: `active: ${n(t.rowsLeft)} of ${n(TRIAL.rows)} rows left, until ${t.expiresAt}`,
    expired: `expired ${t.expiresAt} (${n(t.rowsUsed)} rows used)`,
    exhausted: `exhausted ${t.exhaustedAt} (all ${n(TRIAL.rows)} rows used; it would have run until ${t.expiresAt})`,
  }[t.state];
  const access = r.access.allowed
    ? `allowed, served as ${r.access.tier}`
    : `refused: ${r.access.status} ${r.access.code} (${r.access.message})`;
  const active = r.keys.filter((k) => k.revokedMs === null).length;
  return [
    `account ${a.id} <${a.email}>, created ${a.createdAt}, changed ${a.updatedAt}`,
    `  plan        ${a.plan}${a.hadSubscription ? " (had a subscription before)" : ""}`,
    `  policy      ${a.policy}`,
    `  email       ${a.verified ? "verified" : "not verified"}`,
    `  list access ${access}`,
    `  trial       ${trialLine}`,
    `  rows, 24 h  ${n(r.rowsUsed24h)}${r.rowBudget === null ? " (no row budget)" : ` of a ${n(r.rowBudget)} row budget`}`,
    `  rate        ${r.rate.perMinute} requests a minute, burst ${r.rate.burst}, per ${r.rate.scope}`,
    `  keys        ${active} active, ${r.keys.length - active} revoked; at most ${a.keyLimit} active from the portal`,
    ...(r.keys.length
      ? keyTable(r.keys)
          .split("\n")
          .map((line) => `    ${line}`)
      : []),
  ].join("\n");
}

export async function showAccount(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, LEDGER_FLAG, true);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const id = idArg("account ID", positionals[0]);
  const ledger = await openOperatorLedger(values);
  try {
    const report = await readAccountReport(ledger, id, Date.now());
    if (!report) throw new Error(`no account ${id}`);
    output(values.json, report, renderReport(report));
  } finally {
    await ledger.close();
  }
  return 0;
}

/** Refuses a second account for an email unless the operator says it is meant. */
export async function assertEmailFree(ledger: Ledger, email: string, allowDuplicate: boolean): Promise<void> {
  if (allowDuplicate) return;
  const existing = await ledger.listAccounts({ email });
  if (existing.length === 0) return;
  throw new Error(
    `an account with email ${email} exists already (account ${existing.map((a) => a.id).join(", ")}); ` +
      `see it with marquee accounts show ${existing[0].id}, or pass --allow-duplicate-email to create another`,
  );
}
