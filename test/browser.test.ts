/**
 * What a person sees, in real headless Chromium (Debian `chromium`, driven by playwright-core)
 * against the real Bun server: the event page, its tickets link, the handoff confirmation page,
 * Continue landing on the seller's checkout (a local stub seller), and a second Continue from
 * another tab showing the 409 page. Screenshots go to test-artifacts/ (gitignored).
 *
 * A missing Chromium fails this suite with a clear message; it never skips.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, ROOT, startBunServer } from "./harness.ts";
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

describe("pages in headless Chromium", () => {
  let target: Awaited<ReturnType<typeof startBunServer>> | undefined;
  let seller: Server | undefined;
  let sellerOrigin = "";
  const sellerHits: string[] = [];
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
    seller = createServer((req, res) => {
      if (req.url?.startsWith("/checkout")) sellerHits.push(req.url);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end('<!doctype html><html lang="en"><title>Stub checkout</title><main><h1>Stub checkout</h1></main></html>');
    });
    await new Promise<void>((resolve) => seller!.listen(0, "127.0.0.1", resolve));
    sellerOrigin = `http://127.0.0.1:${(seller.address() as { port: number }).port}`;
    target = await startBunServer();
    userDataDir = mkdtempSync(join(tmpdir(), "marquee-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
    });
  });

  afterAll(async () => {
    await context?.close();
    await target?.close();
    await new Promise((resolve) => (seller ? seller.close(resolve) : resolve(undefined)));
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  async function open(url: string): Promise<{ page: Page; status: number }> {
    const page = await context!.newPage();
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
    const res = await page.goto(url);
    return { page, status: res!.status() };
  }

  it("shows the event page, follows its tickets link, then hands off to the seller exactly once", async () => {
    const c = new Client(target!);
    await c.setClock("2030-01-01T00:00:00Z");
    await c.records([
      venueRecord(1, { name: "The Fillmore", city: "San Francisco", state: "CA", timezone: "America/Los_Angeles" }),
      eventRecord(600, 1, "2030-06-14T03:30:00Z", {
        title: "Sunset Strings & Friends",
        slug: "sunset-strings",
        costText: "$35",
        isFree: false,
        isLowTickets: true,
        categories: ["Music", "Nightlife"],
        website: null,
        ticketLinks: [{ url: `${sellerOrigin}/checkout?event=600`, seller: "tixr", broken: false }],
      }),
    ]);

    // The event page.
    const { page: eventPage, status } = await open(`${target!.baseUrl}/events/600/sunset-strings`);
    expect(status).toBe(200);
    await eventPage.setViewportSize({ width: 375, height: 800 });
    expect(await eventPage.locator("html").getAttribute("lang")).toBe("en");
    expect(await eventPage.getByRole("heading", { level: 1 }).innerText()).toBe("Sunset Strings & Friends");
    expect(await eventPage.getByRole("main").count()).toBe(1);
    const body = (await eventPage.locator("main").innerText()).replace(/\s+/g, " ");
    expect(body).toMatch(/Thursday, June 13, 2030(,| at) 8:30 PM PDT/);
    expect(body).toContain("The Fillmore");
    expect(body).toContain("San Francisco, CA");
    expect(body).toContain("$35");
    expect(body).toContain("Few tickets left");
    expect(body).toContain("Nightlife");
    // Responsive: nothing wider than a phone screen.
    expect(await eventPage.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    // The stylesheet applied (the CSP admits it by hash): the tickets button has its colour.
    const tickets = eventPage.getByRole("link", { name: "Get tickets" });
    expect(await tickets.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe("rgb(23, 70, 162)");
    expect(await lowestContrast(eventPage)).toBeGreaterThanOrEqual(4.5);
    await eventPage.screenshot({ path: join(ARTIFACTS, "event-page.png"), fullPage: true });
    await tickets.click();
    await eventPage.waitForURL(`${sellerOrigin}/checkout?event=600`);
    expect(sellerHits).toEqual(["/checkout?event=600"]);

    // A handoff, created through the API as a client would.
    const key = await c.keyFor({ plan: "business" });
    const created = await c.postJson("/v1/ticket-handoffs", { event_id: 600 }, { authorization: `Bearer ${key}` });
    expect(created.status).toBe(201);
    const handoff = (await created.json()) as { handoff_id: string; handoff_url: string };

    // Two tabs on the confirmation page; opening them records nothing.
    const first = await open(handoff.handoff_url);
    const second = await open(handoff.handoff_url);
    expect([first.status, second.status]).toEqual([200, 200]);
    const confirm = first.page;
    expect(await confirm.getByRole("heading", { level: 1 }).innerText()).toBe("Continue to Tixr for tickets");
    const facts = (await confirm.locator("main").innerText()).replace(/\s+/g, " ");
    expect(facts).toContain("Sunset Strings & Friends");
    expect(facts).toContain("The Fillmore");
    expect(facts).toMatch(/June 13, 2030(,| at) 8:30 PM PDT/);
    expect(facts).toContain("Tixr");
    expect(facts).toContain("expires in 15 minutes");
    expect(await lowestContrast(confirm)).toBeGreaterThanOrEqual(4.5);
    await confirm.screenshot({ path: join(ARTIFACTS, "handoff-page.png"), fullPage: true });
    const stored = async () =>
      (await (await c.get(`/_test/handoffs/${handoff.handoff_id}`)).json()) as { clicks: number };
    expect((await stored()).clicks).toBe(0);

    // Continue: lands on the seller's checkout.
    await confirm.getByRole("button", { name: "Continue to Tixr" }).click();
    await confirm.waitForURL(`${sellerOrigin}/checkout?event=600`);
    expect(await confirm.getByRole("heading", { level: 1 }).innerText()).toBe("Stub checkout");
    expect(sellerHits).toHaveLength(2);
    expect((await stored()).clicks).toBe(1);

    // Continue again from the other tab: the 409 page, no second trip to the seller.
    const [again] = await Promise.all([
      second.page.waitForResponse((r) => r.url().endsWith("/continue")),
      second.page.getByRole("button", { name: "Continue to Tixr" }).click(),
    ]);
    expect(again.status()).toBe(409);
    await second.page.waitForLoadState();
    expect(await second.page.getByRole("heading", { level: 1 }).innerText()).toBe(
      "You already continued to the seller",
    );
    expect(await second.page.getByRole("link", { name: "Go to the event page" }).getAttribute("href")).toContain(
      "/events/600/",
    );
    await second.page.screenshot({ path: join(ARTIFACTS, "handoff-409.png"), fullPage: true });
    expect(sellerHits).toHaveLength(2);
    expect((await stored()).clicks).toBe(1);
    // No CSP refusals or other page errors; the one expected entry is the 409 itself.
    expect(consoleErrors.filter((e) => !e.includes("status of 409"))).toEqual([]);
  });

  it("renders the API reference at /docs from local assets only", async () => {
    const requested: string[] = [];
    const { page, status } = await open(`${target!.baseUrl}/docs`);
    page.on("request", (r) => requested.push(r.url()));
    await page.reload();
    expect(status).toBe(200);
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    expect(await page.getByRole("heading", { level: 1 }).count()).toBe(1);
    expect(await page.locator("#version").innerText()).toBe("1.7.1");
    // Every list parameter and the list errors a client branches on are on the page.
    for (const name of [
      "state",
      "city",
      "starts_after",
      "starts_before",
      "source",
      "limit",
      "cursor",
      "lat",
      "lng",
      "radius_miles",
      "polygon",
      "include_centroids",
    ]) {
      expect(await page.locator(`#op-listEvents-param-${name}`).count(), name).toBe(1);
    }
    const text = await page.locator("main").innerText();
    for (const code of [
      "invalid_cursor",
      "trial_capacity_reserved",
      "row_budget_exhausted",
      "ticket_link_unavailable",
    ]) {
      expect(text).toContain(code);
    }
    expect(await page.locator("#mcp").innerText()).toContain("search_events");
    // Nothing is fetched from another origin (the machine has no internet; the page must not need it).
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((u) => !u.startsWith(target!.baseUrl))).toEqual([]);
    expect(await lowestContrast(page)).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: join(ARTIFACTS, "docs-page.png") });
  });
});

/**
 * The lowest WCAG contrast ratio between the text colour and the effective background of every
 * element that directly holds text on the page (as rendered, after the stylesheet applied).
 */
function lowestContrast(page: Page): Promise<number> {
  return page.evaluate(() => {
    const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]: number[]) => {
      const f = (v: number) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el: Element | null): number[] => {
      for (; el; el = el.parentElement) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c.length === 3 || c[3] > 0) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    let lowest = 21;
    for (const el of document.querySelectorAll("body *")) {
      const hasText = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== "");
      if (!hasText || (el as HTMLElement).offsetParent === null) continue;
      const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
      lowest = Math.min(lowest, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
    }
    return lowest;
  });
}
