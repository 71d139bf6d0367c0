/**
 * Owners' keys in the developer portal, in-process and against the Bun server: creation (JSON
 * and HTML forms) with the key's value in exactly one response body, the kinds, the account's
 * state on the page, both ceilings with their codes and headers, revocation refusing the key on
 * /v1/events and /mcp at once, and one account never seeing or touching another's keys.
 */
import { beforeAll, expect, it } from "vitest";
import { PORTAL } from "../db/contract.ts";
import { describeMatrix } from "./harness.ts";
import { errorCodeOf, listStatus, mcpStatus, PortalSession } from "./portal-client.ts";

const NOW = "2030-05-01T09:00:00.000Z";
const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describeMatrix("developer portal: keys", (use) => {
  beforeAll(async () => {
    await use().setClock(NOW);
  });

  it("creates a live key for a paid plan, shown once: its value is in exactly one response body", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    await s.page();
    const created = await s.create("production server");
    expect(created).toMatchObject({ kind: "live", label: "production server", createdAt: NOW });
    expect(created.key).toMatch(/^mq_live_[0-9A-Za-z]{38}$/);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    const creation = s.bodies.length - 1;
    expect(await listStatus(c, created.key)).toBe(200);

    // Everything the owner can look at afterwards: the page, the JSON list, the confirmation step.
    await s.page();
    await s.keys();
    await s.page(`/developers/keys/${created.id}/revoke`);
    await s.create("another");
    await s.page();
    const withKey = s.bodies.map((b, i) => (b.includes(created.key) ? i : -1)).filter((i) => i >= 0);
    expect(withKey).toEqual([creation]);
    expect(s.bodies.filter((b) => b.includes(created.prefix)).length).toBeGreaterThan(2);
  });

  it("never creates more keys than the limit, however many requests arrive at once", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business", keyLimit: 3 }));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => s.json("POST", "/developers/keys", { label: `race ${i}` })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    expect(await s.keys()).toHaveLength(3);
  });

  it("answers JSON to a JSON body sent without an Accept header", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    const res = await s.send("POST", "/developers/keys", {
      headers: { "content-type": "application/json", "x-csrf-token": s.csrf },
      body: JSON.stringify({ label: "no accept" }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(((await res.json()) as { label: string }).label).toBe("no accept");
  });

  it("answers the creation no-store, and lists keys by id, kind, label, prefix, creation and status", async () => {
    const c = use();
    const id = await c.account({ plan: "basic" });
    const s = await PortalSession.open(c, id);
    const r = await s.json("POST", "/developers/keys", { label: "ci" });
    expect(r.status).toBe(201);
    expect(r.res.headers.get("cache-control")).toBe("no-store");
    const created = r.body as { id: number; prefix: string };
    const operatorKey = await c.key(id, "builder");
    expect(operatorKey).toMatch(/^mq_builder_/);
    const keys = await s.keys();
    expect(keys).toEqual([
      {
        id: created.id,
        kind: "live",
        label: "ci",
        prefix: created.prefix,
        createdAt: NOW,
        revokedAt: null,
        status: "active",
      },
      expect.objectContaining({ kind: "builder", label: null, status: "active" }),
    ]);
    for (const k of keys) expect(JSON.stringify(k)).not.toMatch(/mq_\w+_[0-9A-Za-z]{38}/);
  });

  it("creates builder keys for an account without a paid plan, and shows its trial", async () => {
    const c = use();
    const id = await c.account({ plan: "none", verified: true });
    const s = await PortalSession.open(c, id);
    const created = await s.create();
    expect(created.kind).toBe("builder");
    expect(created.label).toBeNull();
    const account = ((await s.json("GET", "/developers/keys")).body as { account: Record<string, unknown> }).account;
    expect(account).toMatchObject({
      plan: "none",
      keyKind: "builder",
      trial: { state: "not_started", rowsUsed: 0, rowLimit: 1000 },
      rowBudget: null,
    });

    // The first request starts the trial; the page counts its days.
    expect(await listStatus(c, created.key)).toBe(200);
    const started = ((await s.json("GET", "/developers/keys")).body as { account: { trial: Record<string, unknown> } })
      .account.trial;
    expect(started).toMatchObject({ state: "active", daysLeft: 7, expiresAt: "2030-05-08T09:00:00.000Z" });
    const page = text(await (await s.page()).text());
    expect(page).toContain("Active: 7 days left");
    expect(page).toContain("0 of 1,000 rows used");
  });

  it("shows a paid plan's row budget on the page", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    const page = text(await (await s.page()).text());
    expect(page).toContain("Business");
    expect(page).toContain("0 of 500,000 rows used in the last 24 hours");
    expect(page).toContain("0 of 10 active keys");
  });

  it("creates through the HTML form: 201 page with the key once, then a page without it", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    const res = await s.form("/developers/keys", { label: "from the form" });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    const key = /<code class="secret" id="new-key">(mq_live_[0-9A-Za-z]{38})<\/code>/.exec(html)?.[1];
    expect(key).toBeDefined();
    expect(html).toContain("only time it is shown");
    expect(await listStatus(c, key!)).toBe(200);
    const after = await (await s.page()).text();
    expect(after).toContain("from the form");
    expect(after).not.toContain(key!);
  });

  it("refuses a label over 64 characters or not a string, creating nothing", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    for (const label of ["x".repeat(PORTAL.maxLabelLength + 1), 42, "tab\there"]) {
      const r = await s.json("POST", "/developers/keys", { label });
      expect(r.status, String(label)).toBe(400);
      expect(errorCodeOf(r.body)).toBe("invalid_request");
    }
    const bad = await s.send("POST", "/developers/keys", {
      headers: { accept: "application/json", "content-type": "application/json", "x-csrf-token": s.csrf },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    const page = await s.form("/developers/keys", { label: "y".repeat(PORTAL.maxLabelLength + 1) });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("at most 64 characters");
    expect(await s.keys()).toEqual([]);
    expect((await s.create("x".repeat(PORTAL.maxLabelLength))).label).toHaveLength(PORTAL.maxLabelLength);
  });

  it("stops at the account's key limit with 409 key_limit_reached; revoked keys do not count", async () => {
    const c = use();
    const id = await c.account({ plan: "business", keyLimit: 2 });
    const s = await PortalSession.open(c, id);
    const first = await s.create("one");
    await s.create("two");
    const r = await s.json("POST", "/developers/keys", { label: "three" });
    expect(r.status).toBe(409);
    expect(errorCodeOf(r.body)).toBe("key_limit_reached");
    expect(r.res.headers.get("retry-after")).toBeNull();
    expect(await s.keys()).toHaveLength(2);

    const page = await s.form("/developers/keys", { label: "three" });
    expect(page.status).toBe(409);
    expect(text(await page.text())).toContain("already has 2 active keys");

    expect((await s.json("POST", `/developers/keys/${first.id}/revoke`)).status).toBe(200);
    expect((await s.create("three")).label).toBe("three");
    // The operator raises the limit: the owner may hold more at once.
    await c.patchAccount(id, { keyLimit: 3 });
    expect((await s.create("four")).label).toBe("four");
    expect((await s.json("POST", "/developers/keys", {})).status).toBe(409);
  });

  it("allows 10 creations per rolling hour, then 429 key_issuance_rate_limited with Retry-After", async () => {
    const c = use();
    const id = await c.account({ plan: "business", keyLimit: 50 });
    const s = await PortalSession.open(c, id);
    // Keys the operator issues do not count toward the owner's hourly creations.
    for (let i = 0; i < 3; i++) await c.key(id);
    for (let i = 0; i < PORTAL.issuancePerWindow; i++) {
      await s.create(`k${i}`);
      await c.advance(60);
    }
    // Ten minutes after the first creation: 50 minutes until it leaves the hour.
    const r = await s.json("POST", "/developers/keys", { label: "eleven" });
    expect(r.status).toBe(429);
    expect(errorCodeOf(r.body)).toBe("key_issuance_rate_limited");
    expect(r.res.headers.get("retry-after")).toBe(String(50 * 60));
    expect(r.res.headers.get("cache-control")).toBe("no-store");
    const page = await s.form("/developers/keys", { label: "eleven" });
    expect(page.status).toBe(429);
    expect(page.headers.get("retry-after")).toBe(String(50 * 60));
    expect(await s.keys()).toHaveLength(13);

    await c.advance(50 * 60 - 1);
    const still = await s.json("POST", "/developers/keys", {});
    expect(still.status).toBe(429);
    expect(still.res.headers.get("retry-after")).toBe("1");
    await c.advance(1);
    expect((await s.create("eleven")).label).toBe("eleven");
    // The second creation leaves the hour a minute after the first.
    const next = await s.json("POST", "/developers/keys", {});
    expect(next.status).toBe(429);
    expect(next.res.headers.get("retry-after")).toBe("60");
  });

  it("checks the key limit before the hourly rate", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    for (let i = 0; i < PORTAL.defaultKeyLimit; i++) await s.create();
    const r = await s.json("POST", "/developers/keys", {});
    expect(r.status).toBe(409);
    expect(errorCodeOf(r.body)).toBe("key_limit_reached");
  });

  it("revokes by JSON: the key is refused on /v1/events and /mcp at once", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    const created = await s.create("to revoke");
    const kept = await s.create("kept");
    expect(await listStatus(c, created.key)).toBe(200);
    expect(await mcpStatus(c, created.key)).toBe(200);

    const r = await s.json("POST", `/developers/keys/${created.id}/revoke`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: created.id, status: "revoked" });
    expect(r.res.headers.get("cache-control")).toBe("no-store");
    expect(await listStatus(c, created.key)).toBe(401);
    expect(await mcpStatus(c, created.key)).toBe(401);
    expect(await listStatus(c, kept.key)).toBe(200);

    // Again: nothing changes, the same answer.
    expect((await s.json("POST", `/developers/keys/${created.id}/revoke`)).body).toEqual({
      id: created.id,
      status: "revoked",
    });
    const listed = (await s.keys()).find((k) => k.id === created.id)!;
    const { now } = (await (await c.get("/_test/clock")).json()) as { now: string };
    expect(listed).toMatchObject({ status: "revoked", revokedAt: now });
  });

  it("revokes in HTML only after the confirmation step", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    const created = await s.create("browser");

    const confirm = await s.page(`/developers/keys/${created.id}/revoke`);
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain(`Revoke key ${created.id}?`);
    expect(html).toContain('name="confirm" value="yes"');
    expect(await listStatus(c, created.key)).toBe(200);

    // A form post without the confirmation shows the same step and changes nothing.
    const unconfirmed = await s.form(`/developers/keys/${created.id}/revoke`);
    expect(unconfirmed.status).toBe(200);
    expect(await unconfirmed.text()).toContain(`Revoke key ${created.id}?`);
    expect(await listStatus(c, created.key)).toBe(200);

    const done = await s.form(`/developers/keys/${created.id}/revoke`, { confirm: "yes" });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`/developers/keys?revoked=${created.id}`);
    expect(await listStatus(c, created.key)).toBe(401);
    expect(await mcpStatus(c, created.key)).toBe(401);
    const page = text(await (await s.page(`/developers/keys?revoked=${created.id}`)).text());
    expect(page).toContain(`Key ${created.id} (${created.prefix}…) is revoked`);
  });

  it("never shows or touches another account's keys", async () => {
    const c = use();
    const a = await PortalSession.open(c, await c.account({ plan: "business", email: "a@example.com" }));
    const b = await PortalSession.open(c, await c.account({ plan: "business", email: "b@example.com" }));
    const aKey = await a.create("a's");
    const bKey = await b.create("b's");
    expect((await a.keys()).map((k) => k.id)).toEqual([aKey.id]);
    expect((await b.keys()).map((k) => k.id)).toEqual([bKey.id]);
    expect(await (await a.page()).text()).not.toContain(bKey.prefix);

    const r = await a.json("POST", `/developers/keys/${bKey.id}/revoke`);
    expect(r.status).toBe(404);
    expect(errorCodeOf(r.body)).toBe("not_found");
    expect((await a.page(`/developers/keys/${bKey.id}/revoke`)).status).toBe(404);
    expect((await a.form(`/developers/keys/${bKey.id}/revoke`, { confirm: "yes" })).status).toBe(404);
    expect(await listStatus(c, bKey.key)).toBe(200);
    // Each session's CSRF token is its own: B's token does not work in A's session.
    const crossed = await a.json("POST", "/developers/keys", {}, { "x-csrf-token": b.csrf });
    expect(crossed.status).toBe(403);
    for (const path of ["/developers/keys/abc/revoke", "/developers/keys/0/revoke", "/developers/keys/999999/revoke"]) {
      expect((await a.json("POST", path)).status, path).toBe(404);
    }
  });
});
