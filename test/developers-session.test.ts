/**
 * Developer portal sessions, in-process and against the Bun server: the one-time sign-in link
 * (single use, 15 minutes on the test clock), the session cookie's attributes, the pages without
 * a session, sign-out, and the ways a session ends (12 hours, owner changed).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PORTAL } from "../db/contract.ts";
import { Client, describeMatrix, startBunServer, startInProcess, type Target } from "./harness.ts";
import { errorCodeOf, HTML_ACCEPT, JSON_ACCEPT, openLink, PortalSession, signInLink } from "./portal-client.ts";

const NOW = "2030-05-01T09:00:00.000Z";

function cookieAttributes(setCookie: string): Record<string, string | true> {
  const [, ...attrs] = setCookie.split(";").map((s) => s.trim());
  return Object.fromEntries(
    attrs.map((a) => (a.includes("=") ? [a.split("=")[0].toLowerCase(), a.split("=")[1]] : [a.toLowerCase(), true])),
  );
}

function expectPortalPage(res: Response, html: string) {
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect(res.headers.get("content-security-policy")).toContain("form-action 'self'");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("referrer-policy")).toBe("same-origin");
  expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
  expect(html.match(/<h1[ >]/g)).toHaveLength(1);
  expect(html).not.toMatch(/<script/i);
}

describeMatrix("developer portal: sign-in and sessions", (use) => {
  beforeAll(async () => {
    await use().setClock(NOW);
  });

  it("issues a one-time link under the base URL; opening it starts a session with the documented cookie", async () => {
    const c = use();
    const id = await c.account({ plan: "business" });
    const url = await signInLink(c, id);
    expect(url).toMatch(
      new RegExp(`^${c.target.baseUrl.replace(/[.]/g, "\\.")}/developers/sign-in\\?token=[0-9A-Za-z]{32}$`),
    );

    const res = await openLink(c, url);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/developers/keys");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const setCookie = res.headers.get("set-cookie")!;
    expect(setCookie).toMatch(new RegExp(`^${PORTAL.sessionCookie}=[0-9A-Za-z]{32};`));
    expect(cookieAttributes(setCookie)).toEqual({ path: "/", httponly: true, samesite: "Lax", "max-age": "43200" });

    const page = await c.fetch("/developers/keys", { headers: { cookie: setCookie.split(";")[0], ...HTML_ACCEPT } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expectPortalPage(page, html);
    expect(html).toContain("dev@example.com");
  });

  it("answers 410 to a used link, an unknown or malformed token, and a link past 15 minutes", async () => {
    const c = use();
    const id = await c.account({ plan: "basic" });
    const url = await signInLink(c, id);
    expect((await openLink(c, url)).status).toBe(303);
    const again = await openLink(c, url);
    expect(again.status).toBe(410);
    expect(again.headers.get("set-cookie")).toBeNull();
    const html = await again.text();
    expectPortalPage(again, html);
    expect(html).toContain("This sign-in link can no longer be used");

    const token = new URL(url).searchParams.get("token")!;
    const forged = token.slice(0, -1) + (token.endsWith("a") ? "b" : "a");
    for (const path of [
      `/developers/sign-in?token=${forged}`,
      "/developers/sign-in?token=short",
      "/developers/sign-in",
    ]) {
      expect((await c.fetch(path)).status, path).toBe(410);
    }

    // 15 minutes on the test clock: a second short still signs in, the boundary does not.
    const early = await signInLink(c, id);
    const late = await signInLink(c, id);
    await c.advance(PORTAL.signInLinkTtlMs / 1000 - 1);
    expect((await openLink(c, early)).status).toBe(303);
    await c.advance(1);
    expect((await openLink(c, late)).status).toBe(410);
  });

  it("without a session: a 401 page saying how to sign in, or 401 invalid_session as JSON", async () => {
    const c = use();
    const page = await c.fetch("/developers/keys", { headers: HTML_ACCEPT });
    expect(page.status).toBe(401);
    const html = await page.text();
    expectPortalPage(page, html);
    expect(html).toContain("Sign in to manage your API keys");
    expect(html).toContain("one-time link");

    for (const cookie of [
      undefined,
      `${PORTAL.sessionCookie}=0123456789abcdefghijABCDEFGHIJ01`,
      `${PORTAL.sessionCookie}=bogus`,
    ]) {
      const res = await c.fetch("/developers/keys", { headers: { ...JSON_ACCEPT, ...(cookie ? { cookie } : {}) } });
      expect(res.status).toBe(401);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("www-authenticate")).toBeNull();
      const body = (await res.json()) as { error: { code: string; requestId: string } };
      expect(body.error.code).toBe("invalid_session");
      expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
    }
  });

  it("signs out: the cookie is cleared and the old session id no longer works", async () => {
    const c = use();
    const id = await c.account({ plan: "business" });
    const html = await PortalSession.open(c, id);
    const out = await html.form("/developers/sign-out");
    expect(out.status).toBe(200);
    const outHtml = await out.text();
    expectPortalPage(out, outHtml);
    expect(outHtml).toContain("You are signed out");
    expect(cookieAttributes(out.headers.get("set-cookie")!)).toMatchObject({
      "max-age": "0",
      httponly: true,
      path: "/",
    });
    expect(out.headers.get("set-cookie")).toMatch(new RegExp(`^${PORTAL.sessionCookie}=;`));
    expect((await html.json("GET", "/developers/keys")).status).toBe(401);

    const json = await PortalSession.open(c, id);
    const r = await json.json("POST", "/developers/sign-out");
    expect(r.status).toBe(204);
    expect(r.res.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await json.json("GET", "/developers/keys")).status).toBe(401);
  });

  it("a session lasts 12 hours on the test clock", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "basic" }));
    await c.advance(PORTAL.sessionTtlMs / 1000 - 1);
    expect((await s.json("GET", "/developers/keys")).status).toBe(200);
    await c.advance(1);
    const r = await s.json("GET", "/developers/keys");
    expect(r.status).toBe(401);
    expect(errorCodeOf(r.body)).toBe("invalid_session");
  });

  it("a changed owner ends the session and voids links issued before the change", async () => {
    const c = use();
    const id = await c.account({ plan: "business", email: "first@example.com" });
    const s = await PortalSession.open(c, id);
    const pending = await signInLink(c, id);
    await c.patchAccount(id, { email: "second@example.com" });
    expect((await s.json("GET", "/developers/keys")).status).toBe(401);
    expect((await openLink(c, pending)).status).toBe(410);
    const fresh = await PortalSession.open(c, id);
    const r = await fresh.json("GET", "/developers/keys");
    expect((r.body as { account: { email: string } }).account.email).toBe("second@example.com");
  });

  it("signs in at most once when a link is opened many times at once", async () => {
    const c = use();
    const url = await signInLink(c, await c.account({ plan: "business" }));
    const statuses = (await Promise.all(Array.from({ length: 6 }, () => openLink(c, url)))).map((r) => r.status);
    expect(statuses.sort()).toEqual([303, 410, 410, 410, 410, 410]);
  });

  it("ends every session when the ledger is reset (its accounts are gone)", async () => {
    const c = use();
    const s = await PortalSession.open(c, await c.account({ plan: "business" }));
    await c.reset();
    expect((await s.json("GET", "/developers/keys")).status).toBe(401);
  });

  it("signing in again in the same browser ends the earlier session", async () => {
    const c = use();
    const a = await PortalSession.open(c, await c.account({ plan: "business" }));
    const res = await openLink(c, await signInLink(c, await c.account({ plan: "basic" })), { cookie: a.cookie });
    expect(res.status).toBe(303);
    expect((await a.json("GET", "/developers/keys")).status).toBe(401);
  });

  it("answers 404 for a link to an account that does not exist", async () => {
    const res = await use().postJson("/_test/accounts/999999/sign-in-link", {});
    expect(res.status).toBe(404);
  });
});

describe("developer portal on an https base URL", () => {
  const targets: Target[] = [];
  afterAll(async () => {
    for (const t of targets) await t.close();
  });

  it("marks the session cookie Secure, in-process and on Bun", async () => {
    const inProcess = await startInProcess({ baseUrl: "https://portal.example" });
    const bun = await startBunServer(["--base-url", "https://portal.example"]);
    targets.push(inProcess, bun);
    for (const target of [inProcess, bun]) {
      const c = new Client(target);
      const url = await signInLink(c, await c.account());
      expect(url.startsWith("https://portal.example/developers/sign-in?token="), url).toBe(true);
      const res = await openLink(c, url);
      expect(res.status, target.kind).toBe(303);
      expect(cookieAttributes(res.headers.get("set-cookie")!), target.kind).toEqual({
        path: "/",
        httponly: true,
        samesite: "Lax",
        "max-age": "43200",
        secure: true,
      });
    }
  });
});
