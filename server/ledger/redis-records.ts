/**
 * How the Redis ledger's hashes hold records (docs/redis-ledger.md, "Key layout"): one field
 * table per record, from which encoding and decoding are derived. Hash values are strings;
 * a null is an absent field.
 */
import type { Account, AccountFields, KeyListing } from "../../db/accounts.ts";
import type { Handoff } from "../../db/handoffs.ts";
import type { Session } from "../../db/portal.ts";
import type { Trial } from "../../db/trials.ts";

type FieldType = "string" | "number" | "boolean" | "number?" | "string?";
export type FieldTable<T> = { readonly [K in keyof T]-?: FieldType };

export const ACCOUNT_FIELDS: FieldTable<Account> = {
  id: "number",
  email: "string",
  plan: "string",
  verified: "boolean",
  hadSubscription: "boolean",
  rowBudget: "number?",
  rateSustained: "number?",
  rateBurst: "number?",
  policy: "string",
  keyLimit: "number",
  createdMs: "number",
  updatedMs: "number",
};

/** What `updateAccount` may change. */
export const ACCOUNT_FIELD_NAMES = Object.keys(ACCOUNT_FIELDS).filter(
  (f) => f !== "id" && f !== "createdMs" && f !== "updatedMs",
) as (keyof AccountFields)[];

export const KEY_FIELDS: FieldTable<KeyListing> = {
  id: "number",
  accountId: "number",
  kind: "string",
  prefix: "string",
  createdMs: "number",
  revokedMs: "number?",
  label: "string?",
  issuedBy: "string",
};

/** A key's hash also holds its digest, so the digest index can be rebuilt from the account's keys. */
export const STORED_KEY_FIELDS: FieldTable<KeyListing & { digest: string }> = { ...KEY_FIELDS, digest: "string" };

export const HANDOFF_FIELDS: FieldTable<Handoff> = {
  id: "string",
  accountId: "number",
  keyId: "number",
  eventId: "number",
  seller: "string",
  sellerUrl: "string",
  createdMs: "number",
  expiresMs: "number",
  redeemedMs: "number?",
};

export const SESSION_FIELDS: FieldTable<Session> = {
  accountId: "number",
  owner: "string",
  csrfToken: "string",
  createdMs: "number",
  expiresMs: "number",
};

export const TRIAL_FIELDS: FieldTable<Trial> = {
  accountId: "number",
  startedMs: "number",
  rowsUsed: "number",
  exhaustedMs: "number?",
};

const encodeValue = (type: FieldType, v: unknown): string => (type === "boolean" ? (v ? "1" : "0") : String(v));

/** Field/value pairs to HSET (nulls left out) and the names of null fields (to HDEL). */
export function encodeRecord<T>(
  table: FieldTable<T>,
  record: Partial<T>,
): { set: Record<string, string>; cleared: string[] } {
  const set: Record<string, string> = {};
  const cleared: string[] = [];
  for (const [name, type] of Object.entries(table) as [string, FieldType][]) {
    const v = (record as Record<string, unknown>)[name];
    if (v === undefined) continue;
    if (v === null) cleared.push(name);
    else set[name] = encodeValue(type, v);
  }
  return { set, cleared };
}

/** The record a hash holds, or undefined for an empty hash (a missing key). */
export function decodeRecord<T>(table: FieldTable<T>, hash: Record<string, string>): T | undefined {
  if (Object.keys(hash).length === 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(table) as [string, FieldType][]) {
    const v = hash[name];
    if (v === undefined) out[name] = type.endsWith("?") ? null : type === "string" ? "" : 0;
    else if (type === "boolean") out[name] = v === "1";
    else if (type.startsWith("number")) out[name] = Number(v);
    else out[name] = v;
  }
  return out as T;
}

/** A flat [field, value, field, value, …] reply (HGETALL inside a script) as an object. */
export function pairs(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

/** `{a: "1", b: "x"}` → `["a", "1", "b", "x"]`, for HSET's arguments. */
export const flatten = (o: Record<string, string>): string[] => Object.entries(o).flat();
