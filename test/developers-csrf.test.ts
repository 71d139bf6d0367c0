/**
 * Cross-site request forgery in the developer portal, in-process and against the Bun server:
 * every state-changing request without the session's CSRF token, with another token, or with
 * a cross-site `Origin` answers 403 `invalid_csrf_token` (a 403 page for forms) and changes
 * nothing: no key created, no key revoked, no session ended.
 */
import { beforeAll, expect, it } from "vitest";
import { describeMatrix } from "./harness.ts";
import { errorCodeOf, FORM, HTML_ACCEPT, JSON_ACCEPT, listStatus, PortalSession } from "./portal-client.ts";

const NOW = "2030-05-01T09:00:00.000Z";
const EVIL = "https://evil.example";

describeMatrix("developer portal: CSRF and Origin", (use) => {
  let s: PortalSession;
  let victim: { id: number; key: string };

  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    s = await PortalSession.open(c, await c.account({ plan: "business" }));
    victim = await s.create("victim");
  });

  /** The account's state a refused request must leave as it was. */
  async function unchanged(): Promise<void> {
    const keys = await s.keys();
    expect(keys.map((k) => [k.id, k.status])).toEqual([[victim.id, "active"]]);
    expect(await listStatus(use(), victim.key)).toBe(200);
  }

  const jsonCases: Array<[string, Record<string, string>]> = [
    ["no token", { "x-csrf-token": "" }],
    ["a wrong token", { "x-csrf-token": "0123456789abcdefghijABCDEFGHIJ01" }],
    ["a cross-site Origin with the right token", { origin: EVIL }],
    ["an opaque Origin with the right token", { origin: "null" }],
    ["the right token from another port", { origin: "http://marquee.test:8443" }],
  ];

  for (const [name, headers] of jsonCases) {
    it(`refuses JSON requests with ${name}: 403 invalid_csrf_token, nothing changed`, async () => {
      for (const path of ["/developers/keys", `/developers/keys/${victim.id}/revoke`, "/developers/sign-out"]) {
        const r = await s.json("POST", path, path === "/developers/keys" ? { label: "forged" } : undefined, headers);
        expect(r.status, path).toBe(403);
        expect(errorCodeOf(r.body)).toBe("invalid_csrf_token");
        expect(r.res.headers.get("set-cookie")).toBeNull();
      }
      await unchanged();
    });
  }

  it("refuses forms without the token or from another site with a 403 page, nothing changed", async () => {
    const attempts: Array<[Record<string, string>, Record<string, string>]> = [
      [{ csrf_token: "" }, {}],
      [{ csrf_token: "wrong" }, {}],
      [{}, { origin: EVIL }],
    ];
    for (const [fields, headers] of attempts) {
      for (const [path, extra] of [
        ["/developers/keys", { label: "forged" }],
        [`/developers/keys/${victim.id}/revoke`, { confirm: "yes" }],
        ["/developers/sign-out", {}],
      ] as const) {
        const res = await s.form(path, { ...extra, ...fields }, headers);
        expect(res.status, `${path} ${JSON.stringify(fields)} ${JSON.stringify(headers)}`).toBe(403);
        expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
        expect(await res.text()).toContain("Nothing was changed");
      }
    }
    await unchanged();
  });

  it("refuses a forged form post that carries no session cookie at all", async () => {
    const c = use();
    const res = await c.fetch("/developers/keys", {
      method: "POST",
      headers: { ...HTML_ACCEPT, ...FORM, origin: EVIL },
      body: "label=forged",
    });
    expect(res.status).toBe(403);
    const noCookie = await c.fetch("/developers/keys", {
      method: "POST",
      headers: { ...JSON_ACCEPT, "content-type": "application/json" },
      body: "{}",
    });
    expect(noCookie.status).toBe(401);
    expect(errorCodeOf(await noCookie.json())).toBe("invalid_session");
    await unchanged();
  });

  it("accepts the right token with this service's own Origin, or with no Origin", async () => {
    const c = use();
    const own = await s.json("POST", "/developers/keys", { label: "same origin" }, { origin: c.target.baseUrl });
    expect(own.status).toBe(201);
    const none = await s.json("POST", `/developers/keys/${(own.body as { id: number }).id}/revoke`);
    expect(none.status).toBe(200);
  });
});
