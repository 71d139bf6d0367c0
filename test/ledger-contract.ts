/**
 * The ledger contract (docs/architecture.md, "The ledger and the meter"): one suite, written against the
 * `Ledger` interface alone (server/ledger/ledger.ts), run against every implementation
 * (test/ledger-sqlite.test.ts, and the Redis ledger's own test file). Each test opens a fresh,
 * empty ledger and closes it afterwards. Concurrent calls are started together with
 * Promise.all, so an implementation whose atomic steps are not atomic loses its exactness here.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Account } from "../db/accounts.ts";
import { ACCOUNT_DEFAULTS } from "../db/accounts.ts";
import { type FaultCode, HANDOFF, type KeyKind, MINUTE_MS } from "../db/contract.ts";
import type { Handoff } from "../db/handoffs.ts";
import type { Session } from "../db/portal.ts";
import type { FaultSpec, FaultTarget } from "../server/faults.ts";
import type { Ledger, NewKey } from "../server/ledger/ledger.ts";

export interface OpenedLedger {
  ledger: Ledger;
  close(): Promise<void>;
}

const NOW = Date.UTC(2030, 0, 15, 12, 0, 0);
const HOUR_MS = 60 * MINUTE_MS;

const digest = () => createHash("sha256").update(randomBytes(16)).digest("hex");
const newKey = (accountId: number, kind: KeyKind = "live", origin?: NewKey["origin"]): NewKey => ({
  accountId,
  kind,
  digest: digest(),
  prefix: `mq_${kind}_${randomBytes(2).toString("hex")}`,
  origin,
});
const handoffId = () => `ho_${randomBytes(11).toString("hex")}`;
const count = <T>(values: T[], value: T) => values.filter((v) => v === value).length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const spec = (code: FaultCode, times: number, scope: Partial<FaultSpec> = {}): FaultSpec => ({
  code,
  times,
  keyId: null,
  path: null,
  delayMs: null,
  ...scope,
});
const target = (codes: FaultCode[], path = "/v1/events", keyId: number | null = null): FaultTarget => ({
  path,
  keyId,
  codes,
});

export function ledgerContract(name: string, open: () => Promise<OpenedLedger>): void {
  describe(`ledger contract [${name}]`, () => {
    let opened: OpenedLedger;
    let ledger: Ledger;
    beforeEach(async () => {
      opened = await open();
      ledger = opened.ledger;
    });
    afterEach(async () => {
      await opened.close();
    });

    /** The fault a request takes, if any. */
    const take = async (t: FaultTarget) => (await ledger.test.takeFault(t)).fault;
    const account = (fields: Partial<Account> = {}) =>
      ledger.createAccount({ email: `owner-${randomBytes(4).toString("hex")}@example.com`, ...fields }, NOW);
    /** `n` handoff attempts one after another, and whether each was admitted. */
    const attempts = async (accountId: number, n: number, atMs: number) => {
      const out: boolean[] = [];
      for (let i = 0; i < n; i++) out.push(await ledger.admitHandoffAttempt(accountId, atMs));
      return out;
    };

    describe("accounts", () => {
      it("creates an account with the defaults, reads it back, and counts it", async () => {
        const a = await ledger.createAccount({ email: "a@example.com", plan: "basic" }, NOW);
        expect(a).toEqual({
          ...ACCOUNT_DEFAULTS,
          email: "a@example.com",
          plan: "basic",
          id: a.id,
          createdMs: NOW,
          updatedMs: NOW,
        });
        expect(Number.isInteger(a.id) && a.id > 0).toBe(true);
        expect(await ledger.readAccount(a.id)).toEqual(a);
        const b = await account();
        expect(b.id).not.toBe(a.id);
        expect(await ledger.countAccounts()).toBe(2);
        expect(await ledger.readAccount(b.id + a.id + 1000)).toBeUndefined();
      });

      it("updates the given fields only; ending a paid plan leaves a prior subscription behind", async () => {
        const a = await ledger.createAccount(
          { email: "u@example.com", plan: "enterprise", rowBudget: 5000, rateSustained: 60, rateBurst: 10 },
          NOW,
        );
        const changed = await ledger.updateAccount(a.id, { policy: "stale", keyLimit: 3, verified: false }, NOW + 1000);
        expect(changed).toEqual({ ...a, policy: "stale", keyLimit: 3, verified: false, updatedMs: NOW + 1000 });
        const cleared = await ledger.updateAccount(
          a.id,
          { rowBudget: null, rateSustained: null, rateBurst: null },
          NOW,
        );
        expect(cleared).toMatchObject({ rowBudget: null, rateSustained: null, rateBurst: null, plan: "enterprise" });
        const ended = await ledger.updateAccount(a.id, { plan: "none" }, NOW + 2000);
        expect(ended).toMatchObject({ plan: "none", hadSubscription: true, updatedMs: NOW + 2000 });
        await ledger.updateAccount(a.id, { plan: "basic" }, NOW);
        // An explicit value wins over the one ending a plan implies.
        await ledger.updateAccount(a.id, { plan: "none", hadSubscription: false }, NOW);
        expect(await ledger.readAccount(a.id)).toMatchObject({ plan: "none", hadSubscription: false });
        expect(await ledger.updateAccount(a.id + 1000, { plan: "basic" }, NOW)).toBeUndefined();
        expect(await ledger.countAccounts()).toBe(1);
      });
    });

    describe("keys", () => {
      it("stores digests: found by digest, listed per account in creation order with label and issuer", async () => {
        const a = await account();
        const b = await account();
        const k1 = newKey(a.id, "live");
        const k2 = newKey(a.id, "builder", { label: "ci", issuedBy: "owner" });
        const k3 = newKey(b.id, "legacy");
        const id1 = await ledger.insertKey(k1, NOW);
        const id2 = await ledger.insertKey(k2, NOW + 1);
        const id3 = await ledger.insertKey(k3, NOW + 2);
        expect(new Set([id1, id2, id3]).size).toBe(3);
        expect(await ledger.findKeyByDigest(k1.digest)).toMatchObject({
          id: id1,
          accountId: a.id,
          kind: "live",
          prefix: k1.prefix,
          createdMs: NOW,
          revokedMs: null,
        });
        expect(await ledger.findKeyByDigest(digest())).toBeUndefined();
        expect(await ledger.listKeys(a.id)).toEqual([
          {
            id: id1,
            accountId: a.id,
            kind: "live",
            prefix: k1.prefix,
            createdMs: NOW,
            revokedMs: null,
            label: null,
            issuedBy: "operator",
          },
          {
            id: id2,
            accountId: a.id,
            kind: "builder",
            prefix: k2.prefix,
            createdMs: NOW + 1,
            revokedMs: null,
            label: "ci",
            issuedBy: "owner",
          },
        ]);
        expect(await ledger.listKeys(b.id)).toHaveLength(1);
        expect(await ledger.listKeys(b.id + a.id + 1000)).toEqual([]);
        expect(await ledger.readAccountKey(a.id, id2)).toMatchObject({ id: id2, label: "ci", issuedBy: "owner" });
        expect(await ledger.readAccountKey(a.id, id3)).toBeUndefined();
        expect(await ledger.readAccountKey(b.id, id3)).toMatchObject({ id: id3, kind: "legacy" });
      });

      it("revokes a key once: revoking again keeps the first time; an unknown key is false", async () => {
        const a = await account();
        const k = newKey(a.id);
        const id = await ledger.insertKey(k, NOW);
        expect(await ledger.revokeKey(id, NOW + 5000)).toBe(true);
        expect(await ledger.revokeKey(id, NOW + 9000)).toBe(true);
        expect((await ledger.findKeyByDigest(k.digest))?.revokedMs).toBe(NOW + 5000);
        expect((await ledger.readAccountKey(a.id, id))?.revokedMs).toBe(NOW + 5000);
        expect(await ledger.revokeKey(id + 1000, NOW)).toBe(false);
      });
    });

    describe("owner keys", () => {
      const hourly = (keyLimit: number, perWindow = 100) => ({ keyLimit, perWindow, windowMs: HOUR_MS });

      it("refuses past the active-key ceiling, creating nothing; revoked keys do not count", async () => {
        const a = await account();
        const operatorId = await ledger.insertKey(newKey(a.id), NOW);
        const first = await ledger.insertOwnerKey(newKey(a.id, "live", { label: "one" }), hourly(2), NOW);
        expect(first).toEqual({ created: true, id: expect.any(Number) });
        const refused = await ledger.insertOwnerKey(newKey(a.id), hourly(2), NOW + 1);
        expect(refused).toEqual({ created: false, refused: "key_limit_reached" });
        expect(await ledger.listKeys(a.id)).toHaveLength(2);
        await ledger.revokeKey(operatorId, NOW + 2);
        const again = await ledger.insertOwnerKey(newKey(a.id), hourly(2), NOW + 3);
        expect(again.created).toBe(true);
        const listed = await ledger.listKeys(a.id);
        expect(listed.map((k) => k.issuedBy)).toEqual(["operator", "owner", "owner"]);
        expect(listed[1].label).toBe("one");
        expect(await ledger.ownerKeyCounts(a.id, NOW - HOUR_MS)).toEqual({
          activeKeys: 2,
          issued: { count: 2, oldestMs: NOW },
        });
      });

      it("refuses past the hourly issuance with the oldest creation in the window, then admits as it slides", async () => {
        const a = await account();
        await ledger.insertKey(newKey(a.id), NOW); // the operator's keys are not the owner's issuance
        for (let i = 0; i < 3; i++) {
          expect((await ledger.insertOwnerKey(newKey(a.id), hourly(50, 3), NOW + i * 1000)).created).toBe(true);
        }
        const refused = await ledger.insertOwnerKey(newKey(a.id), hourly(50, 3), NOW + 10_000);
        expect(refused).toEqual({ created: false, refused: "key_issuance_rate_limited", oldestMs: NOW });
        expect(await ledger.listKeys(a.id)).toHaveLength(4);
        expect((await ledger.insertOwnerKey(newKey(a.id), hourly(50, 3), NOW + HOUR_MS - 1)).created).toBe(false);
        expect((await ledger.insertOwnerKey(newKey(a.id), hourly(50, 3), NOW + HOUR_MS)).created).toBe(true);
        expect(await ledger.ownerKeyCounts(a.id, NOW + HOUR_MS - HOUR_MS)).toEqual({
          activeKeys: 5,
          issued: { count: 3, oldestMs: NOW + 1000 },
        });
        expect(await ledger.ownerKeyCounts(a.id + 1000, NOW)).toEqual({
          activeKeys: 0,
          issued: { count: 0, oldestMs: null },
        });
      });

      it("answers the active-key ceiling first when both apply", async () => {
        const a = await account();
        await ledger.insertOwnerKey(newKey(a.id), hourly(1, 1), NOW);
        expect(await ledger.insertOwnerKey(newKey(a.id), hourly(1, 1), NOW + 1)).toEqual({
          created: false,
          refused: "key_limit_reached",
        });
      });

      it("creates exactly the ceiling's worth under 20 concurrent creations", async () => {
        const a = await account();
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => ledger.insertOwnerKey(newKey(a.id), hourly(5), NOW + i)),
        );
        expect(results.filter((r) => r.created)).toHaveLength(5);
        expect(await ledger.listKeys(a.id)).toHaveLength(5);
        const b = await account();
        const limited = await Promise.all(
          Array.from({ length: 20 }, () => ledger.insertOwnerKey(newKey(b.id), hourly(50, 4), NOW)),
        );
        expect(limited.filter((r) => r.created)).toHaveLength(4);
        expect(limited.filter((r) => !r.created && r.refused === "key_issuance_rate_limited")).toHaveLength(16);
      });
    });

    describe("sign-in links and sessions", () => {
      it("a link signs in once, only while live; unknown links are nothing", async () => {
        const a = await account();
        const d = digest();
        await ledger.insertSignInLink(d, { accountId: a.id, owner: a.email }, NOW, NOW + 15 * MINUTE_MS);
        expect(await ledger.useSignInLink(d, NOW + 1000)).toEqual({ accountId: a.id, owner: a.email });
        expect(await ledger.useSignInLink(d, NOW + 2000)).toBeUndefined();
        expect(await ledger.useSignInLink(digest(), NOW)).toBeUndefined();
        const late = digest();
        await ledger.insertSignInLink(late, { accountId: a.id, owner: a.email }, NOW, NOW + 15 * MINUTE_MS);
        expect(await ledger.useSignInLink(late, NOW + 15 * MINUTE_MS)).toBeUndefined();
      });

      it("of 20 concurrent uses of one link exactly one signs in", async () => {
        const a = await account();
        const d = digest();
        await ledger.insertSignInLink(d, { accountId: a.id, owner: a.email }, NOW, NOW + MINUTE_MS);
        const uses = await Promise.all(Array.from({ length: 20 }, () => ledger.useSignInLink(d, NOW + 1)));
        expect(uses.filter((u) => u !== undefined)).toEqual([{ accountId: a.id, owner: a.email }]);
      });

      it("a session is read until it expires, and not after it is deleted", async () => {
        const a = await account();
        const d = digest();
        const session: Session = {
          accountId: a.id,
          owner: a.email,
          csrfToken: "csrf-token-value",
          createdMs: NOW,
          expiresMs: NOW + HOUR_MS,
        };
        await ledger.insertSession(d, session);
        expect(await ledger.readSession(d, NOW + HOUR_MS - 1)).toEqual(session);
        expect(await ledger.readSession(d, NOW + HOUR_MS)).toBeUndefined();
        expect(await ledger.readSession(digest(), NOW)).toBeUndefined();
        const other = digest();
        await ledger.insertSession(other, { ...session, createdMs: NOW + 10 });
        await ledger.deleteSession(other);
        expect(await ledger.readSession(other, NOW + 20)).toBeUndefined();
        await ledger.deleteSession(other); // deleting twice is harmless
        expect(await ledger.readSession(d, NOW + 20)).toEqual(session);
      });
    });

    describe("handoffs", () => {
      const limit = HANDOFF.creationsPerMinute;

      it(`admits ${limit} attempts in a sliding minute per account; refused attempts are not counted`, async () => {
        const a = await account();
        const b = await account();
        expect(await attempts(a.id, 5, NOW)).toEqual(Array(5).fill(true));
        expect(await attempts(a.id, 5, NOW + 30_000)).toEqual(Array(5).fill(true));
        expect(await attempts(a.id, 3, NOW + 40_000)).toEqual([false, false, false]);
        expect(await attempts(b.id, limit, NOW + 40_000)).toEqual(Array(limit).fill(true)); // per account
        // The window is (now - 60 s, now]: at NOW + 60 s the first five have left it.
        expect(await attempts(a.id, 1, NOW + MINUTE_MS - 1)).toEqual([false]);
        expect(await attempts(a.id, 6, NOW + MINUTE_MS)).toEqual([true, true, true, true, true, false]);
        // Had the refusals counted, fewer would fit once the second five leave too.
        expect(await attempts(a.id, 6, NOW + 30_000 + MINUTE_MS)).toEqual([true, true, true, true, true, false]);
      });

      it(`admits exactly ${limit} of 30 concurrent attempts`, async () => {
        const a = await account();
        const admitted = await Promise.all(Array.from({ length: 30 }, () => ledger.admitHandoffAttempt(a.id, NOW)));
        expect(count(admitted, true)).toBe(limit);
      });

      function newHandoff(accountId: number, keyId: number): Omit<Handoff, "redeemedMs"> {
        return {
          id: handoffId(),
          accountId,
          keyId,
          eventId: 42,
          seller: "ticketmaster",
          sellerUrl: "https://www.ticketmaster.com/event/42",
          createdMs: NOW,
          expiresMs: NOW + HANDOFF.lifetimeMs,
        };
      }

      it("stores a handoff as given, unredeemed; an unknown id is nothing", async () => {
        const a = await account();
        const h = newHandoff(a.id, 7);
        await ledger.insertHandoff(h);
        expect(await ledger.readHandoff(h.id)).toEqual({ ...h, redeemedMs: null });
        expect(await ledger.readHandoff(handoffId())).toBeUndefined();
        expect(await ledger.countHandoffClicks(h.id)).toBe(0);
      });

      it("Continue redeems exactly once under 50 concurrent redeems, with one click", async () => {
        const a = await account();
        const h = newHandoff(a.id, 7);
        await ledger.insertHandoff(h);
        const results = await Promise.all(Array.from({ length: 50 }, () => ledger.redeemHandoff(h.id, NOW + 1000)));
        const outcomes = results.map((r) => r.outcome);
        expect(count(outcomes, "redeemed")).toBe(1);
        expect(count(outcomes, "already_redeemed")).toBe(49);
        const won = results.find((r) => r.outcome === "redeemed");
        expect(won).toEqual({ outcome: "redeemed", handoff: { ...h, redeemedMs: NOW + 1000 } });
        expect(await ledger.countHandoffClicks(h.id)).toBe(1);
        expect((await ledger.readHandoff(h.id))?.redeemedMs).toBe(NOW + 1000);
        // Redeemed stays redeemed after the expiry.
        const later = await ledger.redeemHandoff(h.id, h.expiresMs + 1);
        expect(later.outcome).toBe("already_redeemed");
        expect(await ledger.countHandoffClicks(h.id)).toBe(1);
      });

      it("an expired handoff is not redeemed and records no click; an unknown one is missing", async () => {
        const a = await account();
        const h = newHandoff(a.id, 7);
        await ledger.insertHandoff(h);
        expect(await ledger.redeemHandoff(h.id, h.expiresMs)).toEqual({
          outcome: "expired",
          handoff: { ...h, redeemedMs: null },
        });
        expect(await ledger.countHandoffClicks(h.id)).toBe(0);
        expect(await ledger.redeemHandoff(handoffId(), NOW)).toEqual({ outcome: "missing" });
      });
    });

    it("an account that has made no request has no trial and no delivered rows", async () => {
      const a = await account();
      expect(await ledger.readTrial(a.id)).toBeUndefined();
      expect(await ledger.rowsDelivered(a.id, 24 * HOUR_MS, NOW)).toBe(0);
    });

    describe("settings and reset", () => {
      it("ensureSetting: the first writer wins, also among concurrent writers", async () => {
        expect(await ledger.ensureSetting("contract-a", () => "first")).toBe("first");
        let made = 0;
        expect(
          await ledger.ensureSetting("contract-a", () => {
            made++;
            return "second";
          }),
        ).toBe("first");
        expect(made).toBe(0);
        const values = await Promise.all(
          Array.from({ length: 10 }, (_, i) => ledger.ensureSetting("contract-b", () => `writer-${i}`)),
        );
        expect(new Set(values).size).toBe(1);
        expect(values[0]).toMatch(/^writer-\d$/);
      });

      it("reset empties accounts, keys, handoffs, links, sessions, attempts and faults, and keeps settings", async () => {
        expect(await ledger.ensureSetting("contract-kept", () => "kept")).toBe("kept");
        const a = await account();
        const k = newKey(a.id);
        await ledger.insertKey(k, NOW);
        const h = {
          id: handoffId(),
          accountId: a.id,
          keyId: 1,
          eventId: 1,
          seller: "ticketmaster",
          sellerUrl: "https://www.ticketmaster.com/x",
          createdMs: NOW,
          expiresMs: NOW + HANDOFF.lifetimeMs,
        };
        await ledger.insertHandoff(h);
        const link = digest();
        await ledger.insertSignInLink(link, { accountId: a.id, owner: a.email }, NOW, NOW + MINUTE_MS);
        const session = digest();
        await ledger.insertSession(session, {
          accountId: a.id,
          owner: a.email,
          csrfToken: "t",
          createdMs: NOW,
          expiresMs: NOW + HOUR_MS,
        });
        await attempts(a.id, HANDOFF.creationsPerMinute, NOW);
        await ledger.test.armFault(spec("handoff_unavailable", 3));

        await ledger.reset();

        expect(await ledger.countAccounts()).toBe(0);
        expect(await ledger.readAccount(a.id)).toBeUndefined();
        expect(await ledger.findKeyByDigest(k.digest)).toBeUndefined();
        expect(await ledger.readHandoff(h.id)).toBeUndefined();
        expect(await ledger.useSignInLink(link, NOW + 1)).toBeUndefined();
        expect(await ledger.readSession(session, NOW + 1)).toBeUndefined();
        expect(await ledger.test.pendingFaults()).toEqual([]);
        expect(await take(target(["handoff_unavailable"]))).toBeNull();
        expect(await ledger.ensureSetting("contract-kept", () => "new")).toBe("kept");
        // The attempt window starts again for a new account (ids may be reused after a reset).
        const fresh = await account();
        expect(await attempts(fresh.id, HANDOFF.creationsPerMinute, NOW + 1)).toEqual(
          Array(HANDOFF.creationsPerMinute).fill(true),
        );
      });
    });

    describe("test state", () => {
      it("the test clock follows the wall clock until written, and again after null", async () => {
        expect(await ledger.test.readClock()).toBeNull();
        await ledger.test.writeClock(NOW);
        expect(await ledger.test.readClock()).toBe(NOW);
        await ledger.test.writeClock(NOW + 5000);
        expect(await ledger.test.readClock()).toBe(NOW + 5000);
        await ledger.test.writeClock(null);
        expect(await ledger.test.readClock()).toBeNull();
      });

      it("an armed fault is taken the armed number of times, by the requests it matches, in arming order", async () => {
        const handoffs = target(["handoff_unavailable", "rate_limit_unavailable"], "/v1/ticket-handoffs");
        expect(await take(handoffs)).toBeNull();
        const first = await ledger.test.armFault(spec("handoff_unavailable", 2));
        const second = await ledger.test.armFault(spec("rate_limit_unavailable", 1, { keyId: 7, path: "/v1/" }));
        expect(second.id).toBeGreaterThan(first.id);
        expect(await ledger.test.pendingFaults()).toEqual([first, second]);
        // Concurrent requests spend each use once.
        const taken = await Promise.all(Array.from({ length: 5 }, () => take(handoffs)));
        expect(taken.filter((f) => f !== null).map((f) => f!.id)).toEqual([first.id, first.id]);
        expect(await ledger.test.pendingFaults()).toEqual([second]);
        // Scoped: another key, another path or a code the request cannot get never takes it.
        expect(await take({ ...handoffs, keyId: 8 })).toBeNull();
        expect(await take({ ...handoffs, keyId: 7, path: "/handoffs/x" })).toBeNull();
        expect(await take({ ...handoffs, keyId: 7, codes: ["delay"] })).toBeNull();
        expect(await take({ ...handoffs, keyId: 7 })).toEqual(second);
        expect(await ledger.test.pendingFaults()).toEqual([]);
      });

      it("faults keep their scope and delay; clearFaults disarms them all and counts them", async () => {
        const delay = await ledger.test.armFault(spec("delay", 1_000_000, { delayMs: 250, path: "/v1/events" }));
        expect(delay).toMatchObject({ code: "delay", times: 1_000_000, delayMs: 250, path: "/v1/events", keyId: null });
        const events = target(["delay", "reset"], "/v1/events");
        expect(await take(events)).toEqual(delay);
        expect(await ledger.test.pendingFaults()).toEqual([{ ...delay, times: 999_999 }]);
        await ledger.test.armFault(spec("reset", 1));
        expect(await ledger.test.clearFaults()).toBe(2);
        expect(await ledger.test.pendingFaults()).toEqual([]);
        expect(await take(events)).toBeNull();
      });
    });

    describe("access changes", () => {
      /** Resolves when `listener` was called, or after `ms` with false. */
      function calledWithin(ms: number): { listener: () => void; called: Promise<boolean>; calls: () => number } {
        let calls = 0;
        let resolve: (v: boolean) => void = () => {};
        const called = new Promise<boolean>((r) => {
          resolve = r;
        });
        const timer = setTimeout(() => resolve(false), ms);
        return {
          listener: () => {
            calls++;
            clearTimeout(timer);
            resolve(true);
          },
          called,
          calls: () => calls,
        };
      }

      /**
       * Waits until no notice of the changes made so far arrives for 150 ms (at most 2 s). A
       * cluster delivers a notice published on one node to the subscriber's node a little later.
       */
      async function quiet(): Promise<void> {
        let last = Date.now();
        const unsubscribe = ledger.onAccessChange(() => {
          last = Date.now();
        });
        const deadline = Date.now() + 2000;
        while (Date.now() - last < 150 && Date.now() < deadline) await sleep(25);
        unsubscribe();
      }

      it("calls a listener within a second after a key is revoked, and not after unsubscribing", async () => {
        const a = await account();
        const first = await ledger.insertKey(newKey(a.id), NOW);
        const second = await ledger.insertKey(newKey(a.id), NOW);
        await quiet();
        const watch = calledWithin(1000);
        const unsubscribe = ledger.onAccessChange(watch.listener);
        try {
          await sleep(50);
          expect(watch.calls()).toBe(0);
          await ledger.revokeKey(first, NOW + 1);
          expect(await watch.called).toBe(true);
        } finally {
          unsubscribe();
        }
        const after = watch.calls();
        await ledger.revokeKey(second, NOW + 2);
        await sleep(700);
        expect(watch.calls()).toBe(after);
      });

      it("calls a listener within a second after an account changes", async () => {
        const a = await account();
        await quiet();
        const watch = calledWithin(1000);
        const unsubscribe = ledger.onAccessChange(watch.listener);
        try {
          await sleep(50);
          await ledger.updateAccount(a.id, { plan: "business" }, NOW + 1);
          expect(await watch.called).toBe(true);
        } finally {
          unsubscribe();
        }
      });
    });
  });
}
