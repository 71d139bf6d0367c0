/**
 * API key format (docs/api.md, Plans and access): `mq_<kind>_<secret>`, the secret being 32 random base62
 * characters followed by a 6-character base62 checksum, so a malformed or mistyped key is
 * rejected without a ledger lookup. Only the SHA-256 digest of a key is ever stored.
 */
import { createHash, randomBytes } from "node:crypto";
import type { KeyOrigin } from "../db/accounts.ts";
import { KEY_KINDS, type KeyKind } from "../db/contract.ts";
import { onBun } from "../db/runtime.ts";
import type { Ledger, NewKey } from "./ledger/ledger.ts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS = 32;
const CHECK_CHARS = 6;
const KEY_PATTERN = new RegExp(
  `^mq_(${KEY_KINDS.join("|")})_([0-9A-Za-z]{${RANDOM_CHARS}})([0-9A-Za-z]{${CHECK_CHARS}})$`,
);

function base62(bytes: Uint8Array, length: number): string {
  let out = "";
  for (let i = 0; out.length < length; i++) out += BASE62[bytes[i % bytes.length] % 62];
  return out;
}

/** Uniformly random base62 characters (keys, handoff ids). */
export function randomBase62(length: number): string {
  // Rejection sampling keeps the characters uniform.
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  return base62(createHash("sha256").update(body).digest(), CHECK_CHARS);
}

export function generateKey(kind: KeyKind): string {
  const body = `mq_${kind}_${randomBase62(RANDOM_CHARS)}`;
  return body + checksum(body);
}

/** The key's kind when it is well formed with a valid checksum, else null. */
export function parseKey(key: string): KeyKind | null {
  const m = KEY_PATTERN.exec(key);
  if (!m) return null;
  const body = key.slice(0, key.length - CHECK_CHARS);
  return checksum(body) === m[3] ? (m[1] as KeyKind) : null;
}

/** Bun's own SHA-256 where it runs: no hash object per call, which every request would make. */
const sha256Hex: (text: string) => string = onBun
  ? (text) => Bun.SHA256.hash(text, "hex")
  : (text) => createHash("sha256").update(text).digest("hex");

export function digestKey(key: string): string {
  return sha256Hex(key);
}

/** What `keys list` shows: kind and the first four random characters. */
export function displayPrefix(key: string): string {
  const kind = parseKey(key) ?? "unknown";
  return `mq_${kind}_${key.slice(`mq_${kind}_`.length, `mq_${kind}_`.length + 4)}`;
}

/** The key of an `Authorization: Bearer <key>` field's value; null when absent or not a bearer credential. */
export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  // The common case without a regular expression: "Bearer <token>", one space, no trailing space.
  const space = header.indexOf(" ");
  if (
    space === 6 &&
    header.startsWith("Bearer") &&
    header.indexOf(" ", 7) === -1 &&
    header.length > 7 &&
    !/\s/.test(header[7])
  ) {
    return header.slice(7);
  }
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

export interface IssuedKey {
  id: number;
  /** Shown once; the ledger keeps only its digest. */
  key: string;
  prefix: string;
}

/** A new key for the account (`key`, shown once) and what the ledger stores of it (`stored`). */
export function newKey(accountId: number, kind: KeyKind, origin: KeyOrigin = {}): { key: string; stored: NewKey } {
  const key = generateKey(kind);
  return { key, stored: { accountId, kind, digest: digestKey(key), prefix: displayPrefix(key), origin } };
}

/** Creates a key for an account: returns the key (shown once) and its id; stores only the digest. */
export async function issueKey(
  ledger: Ledger,
  accountId: number,
  kind: KeyKind,
  nowMs: number,
  origin: KeyOrigin = {},
): Promise<IssuedKey> {
  const { key, stored } = newKey(accountId, kind, origin);
  const id = await ledger.insertKey(stored, nowMs);
  return { id, key, prefix: stored.prefix };
}
