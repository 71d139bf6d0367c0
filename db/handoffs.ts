/**
 * Ticket handoffs in the ledger (docs/api.md, Plans and access; docs/api.md, Ticket handoffs) and the one live-row read that handoffs and the
 * HTML pages share.
 *
 * Every write here is one short transaction on the ledger, which runs with synchronous=FULL: a
 * function returns only after its change is durable, so a response is never sent for a state the
 * ledger could lose in a crash.
 */
import { HANDOFF, MINUTE_MS } from "./contract.ts";
import type { Db } from "./driver.ts";

export interface Handoff {
  id: string;
  accountId: number;
  keyId: number;
  eventId: number;
  seller: string;
  sellerUrl: string;
  createdMs: number;
  expiresMs: number;
  redeemedMs: number | null;
}

const HANDOFF_COLUMNS = `id, account_id AS accountId, key_id AS keyId, event_id AS eventId, seller,
  seller_url AS sellerUrl, created_ms AS createdMs, expires_ms AS expiresMs, redeemed_ms AS redeemedMs`;

/**
 * The handoff limit: admits and counts one creation attempt unless the account already made
 * `HANDOFF.creationsPerMinute` counted attempts in the last 60 seconds (a sliding window).
 * A refused attempt is not counted, so a client that backs off for the Retry-After gets in again.
 * BEGIN IMMEDIATE serialises concurrent attempts, also across processes sharing the ledger file.
 */
export function admitHandoffAttempt(ledger: Db, accountId: number, nowMs: number): boolean {
  const windowStart = nowMs - MINUTE_MS;
  return ledger.transaction(() => {
    ledger
      .prepare("DELETE FROM handoff_attempts WHERE account_id = $accountId AND at_ms <= $windowStart")
      .run({ accountId, windowStart });
    const row = ledger
      .prepare<{ n: number }>("SELECT count(*) AS n FROM handoff_attempts WHERE account_id = $accountId")
      .get({ accountId });
    if (Number(row?.n ?? 0) >= HANDOFF.creationsPerMinute) return false;
    ledger
      .prepare("INSERT INTO handoff_attempts(account_id, at_ms) VALUES ($accountId, $nowMs)")
      .run({ accountId, nowMs });
    return true;
  });
}

export function insertHandoff(ledger: Db, h: Omit<Handoff, "redeemedMs">): void {
  ledger
    .prepare(
      `INSERT INTO handoffs(id, account_id, key_id, event_id, seller, seller_url, created_ms, expires_ms)
       VALUES ($id, $accountId, $keyId, $eventId, $seller, $sellerUrl, $createdMs, $expiresMs)`,
    )
    .run({ ...h });
}

export function readHandoff(ledger: Db, id: string): Handoff | undefined {
  return ledger.prepare<Handoff>(`SELECT ${HANDOFF_COLUMNS} FROM handoffs WHERE id = $id`).get({ id });
}

export type Redemption =
  | { outcome: "redeemed"; handoff: Handoff }
  | { outcome: "already_redeemed" | "expired"; handoff: Handoff }
  | { outcome: "missing" };

/**
 * Continue: moves an active handoff to redeemed and records one click, atomically. The UPDATE is
 * conditional on `redeemed_ms IS NULL` and on the handoff not having expired, so of any number
 * of concurrent Continues exactly one sees `changes = 1`; the rest learn why they lost.
 * A redeemed handoff stays redeemed after its expiry (docs/api.md: Continue
 * again → 409, whatever the time).
 */
export function redeemHandoff(ledger: Db, id: string, nowMs: number): Redemption {
  return ledger.transaction(() => {
    const { changes } = ledger
      .prepare(
        "UPDATE handoffs SET redeemed_ms = $nowMs WHERE id = $id AND redeemed_ms IS NULL AND expires_ms > $nowMs",
      )
      .run({ id, nowMs });
    const handoff = readHandoff(ledger, id);
    if (!handoff) return { outcome: "missing" } as const;
    if (changes === 1) {
      ledger
        .prepare(
          `INSERT INTO handoff_clicks(handoff_id, account_id, key_id, event_id, seller, seller_url, clicked_ms)
           VALUES ($id, $accountId, $keyId, $eventId, $seller, $sellerUrl, $nowMs)`,
        )
        .run({
          id,
          accountId: handoff.accountId,
          keyId: handoff.keyId,
          eventId: handoff.eventId,
          seller: handoff.seller,
          sellerUrl: handoff.sellerUrl,
          nowMs,
        });
      return { outcome: "redeemed", handoff };
    }
    return { outcome: handoff.redeemedMs !== null ? "already_redeemed" : "expired", handoff };
  });
}

export function countHandoffClicks(ledger: Db, id: string): number {
  const row = ledger
    .prepare<{ n: number }>("SELECT count(*) AS n FROM handoff_clicks WHERE handoff_id = $id")
    .get({ id });
  return Number(row?.n ?? 0);
}
