/**
 * The developer portal as an owner uses it, in real headless Chromium (Debian `chromium`, driven
 * by playwright-core) against the real Bun server: sign in by the link, create a key, copy it
 * from the page, use it, revoke it after confirming, sign out. Then an accessibility scan with
 * axe-core of the portal pages, an event page, a handoff page and /docs: no serious or critical
 * violations. Screenshots go to test-artifacts/ (gitignored).
 *
 * A missing Chromium fails this suite with a clear message; it never skips.
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, ROOT, startBunServer } from "./harness.ts";
import { listStatus, signInLink } from "./portal-client.ts";
import { eventRecord, venueRecord } from "./records.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(ROOT, "test-artifacts");
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const PHONE = { width: 375, height: 812 };

describe("developer portal in headless Chromium", () => {
  let target: Awaited<ReturnType<typeof startBunServer>> | undefined;
  let c: Client;
  let context: BrowserContext | undefined;
  let userDataDir: string | undefined;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is missing at ${CHROMIUM}. Install it with 'apt-get install -y chromium'; the browser tests need it.`,
      );
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    target = await startBunServer();
    c = new Client(target);
    await c.setClock("2030-01-01T00:00:00Z");
    userDataDir = mkdtempSync(join(tmpdir(), "marquee-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: PHONE,
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: target.baseUrl });
  });

  afterAll(async () => {
    await context?.close();
    await target?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  async function newPage(): Promise<Page> {
    const page = await context!.newPage();
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
    page.setDefaultTimeout(15_000);
    return page;
  }

  const fitsThePhone = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });

  it("signs in by the link, creates a key, copies it, revokes it after confirming, and signs out", async () => {
    const accountId = await c.account({ plan: "business", email: "owner@example.com" });
    await c.key(accountId); // an operator-issued key, so the table has a row before the first creation
    const page = await newPage();

    // The link signs in and lands on the keys page.
    await page.goto(await signInLink(c, accountId));
    expect(new URL(page.url()).pathname).toBe("/developers/keys");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("API keys");
    const cookies = await context!.cookies(target!.baseUrl);
    expect(cookies.find((k) => k.name === "mq_session")).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
    expect(await page.locator("#plan").innerText()).toContain("Business");
    expect(await fitsThePhone(page)).toBe(true);

    // Create a key with a label; the page shows it once.
    await page.getByLabel(/^Label/).fill("phone test");
    await page.getByRole("button", { name: "Create a live key" }).click();
    await page.waitForSelector("#new-key");
    const shown = await page.locator("#new-key").innerText();
    expect(shown).toMatch(/^mq_live_[0-9A-Za-z]{38}$/);
    expect(await fitsThePhone(page)).toBe(true);
    await shot(page, "portal-key-created.png");

    // Copy it from the page: one click selects the whole key (user-select: all), then copy.
    await page.locator("#new-key").click();
    expect(await page.evaluate(() => window.getSelection()?.toString())).toBe(shown);
    await page.keyboard.press("Control+C");
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(shown);
    expect(await listStatus(c, copied)).toBe(200);

    // Shown once: the keys page no longer has it.
    await page.goto(`${target!.baseUrl}/developers/keys`);
    expect(await page.content()).not.toContain(shown);
    const row = page.locator("tr", { hasText: "phone test" });
    expect(await row.innerText()).toContain(shown.slice(0, 12));
    await shot(page, "portal-keys.png");

    // Revoke after the confirmation step.
    await row.getByRole("link", { name: /^Revoke key/ }).click();
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toMatch(/^Revoke key \d+\?$/);
    expect(await listStatus(c, copied)).toBe(200);
    await shot(page, "portal-revoke-confirm.png");
    await page.getByRole("button", { name: /^Revoke key \d+$/ }).click();
    await page.waitForURL(/\/developers\/keys\?revoked=\d+$/);
    expect(await page.locator("#notice").innerText()).toContain("is revoked");
    expect(await page.locator("tr", { hasText: "phone test" }).innerText()).toContain("Revoked");
    expect(await listStatus(c, copied)).toBe(401);

    // Sign out: the keys page then asks for a sign-in link.
    await page.getByRole("button", { name: "Sign out" }).click();
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("You are signed out");
    expect((await context!.cookies(target!.baseUrl)).find((k) => k.name === "mq_session")).toBeUndefined();
    const after = await page.goto(`${target!.baseUrl}/developers/keys`);
    expect(after!.status()).toBe(401);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Sign in to manage your API keys");
    await shot(page, "portal-signed-out.png");

    // No CSP refusals or page errors; the one expected entry is the 401 itself.
    expect(consoleErrors.filter((e) => !e.includes("status of 401"))).toEqual([]);
  });

  it("answers the portal with headers that forbid framing it", async () => {
    const page = await newPage();
    const res = await page.goto(`${target!.baseUrl}/developers/keys`);
    expect(res!.headers()["x-frame-options"]).toBe("DENY");
    expect(res!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  });

  it("has no serious or critical accessibility violations on the portal, event, handoff and /docs pages", async () => {
    await c.records([
      venueRecord(1, { name: "The Fillmore", city: "San Francisco", state: "CA", timezone: "America/Los_Angeles" }),
      eventRecord(700, 1, "2030-06-14T03:30:00Z", {
        title: "Sunset Strings & Friends",
        slug: "sunset-strings",
        ticketLinks: [{ url: "https://www.tixr.com/checkout/700", seller: "tixr", broken: false }],
      }),
    ]);
    const created = await c.postJson(
      "/v1/ticket-handoffs",
      { event_id: 700 },
      { authorization: `Bearer ${await c.keyFor()}` },
    );
    expect(created.status).toBe(201);
    const handoffUrl = ((await created.json()) as { handoff_url: string }).handoff_url;
    const base = target!.baseUrl;
    const report: string[] = [];
    const page = await newPage();

    /** Scans what `page` shows at a phone's and a desktop's width (or the given widths). */
    async function scan(name: string, widths = [PHONE.width, 1280]): Promise<void> {
      for (const width of widths) {
        await page.setViewportSize({ width, height: 900 });
        const { violations } = await new AxeBuilder({ page }).analyze();
        for (const v of violations) {
          if (v.impact === "serious" || v.impact === "critical") {
            report.push(
              `${name} @${width}px: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
            );
          }
        }
      }
    }

    // Signed out: the sign-in page (401) and a used link (410).
    await context!.clearCookies();
    await page.goto(`${base}/developers/keys`);
    await scan("portal sign-in page");
    const link = await signInLink(c, await c.account({ plan: "none", verified: true }));
    await page.goto(link);
    await page.goto(link);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("This sign-in link can no longer be used");
    await scan("portal used link");

    // Signed in (a trial account): the keys page with a new key and a table, then the confirmation step.
    await page.goto(await signInLink(c, await c.account({ plan: "none", verified: true })));
    await page.getByRole("button", { name: /^Create a builder key/ }).click();
    await page.waitForSelector("#new-key");
    await scan("portal keys page with a new key");
    await shot(page, "portal-trial-account.png");
    await page.getByRole("link", { name: /^Revoke key/ }).click();
    await scan("portal revoke confirmation");

    await page.goto(`${base}/events/700/sunset-strings`);
    await scan("event page");
    await page.goto(handoffUrl);
    await scan("handoff page");
    // The reference page is long (about 8 s a scan on this machine): one width.
    await page.goto(`${base}/docs`);
    await scan("API reference", [PHONE.width]);
    expect(report).toEqual([]);
  }, 180_000);
});
