/**
 * Every HTML response carries the same security headers (server/pages/security-headers.ts;
 * docs/api.md, Pages): a CSP that runs no script and forbids framing, nosniff, a Referrer-Policy.
 * Runs in-process and against the Bun server.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { describeMatrix } from "./harness.ts";

const HTML_RESPONSES: Array<[string, RequestInit?]> = [
  ["/docs"],
  ["/events/999999"],
  ["/events/999999/some-slug", { method: "HEAD" }],
  ["/t/999999"],
  ["/handoffs/ho_0000000000000000000000"],
  ["/handoffs/ho_0000000000000000000000/continue", { method: "POST" }],
  ["/developers/keys", { headers: { accept: "text/html" } }],
  ["/developers/sign-in?token=nope", { headers: { accept: "text/html" } }],
];

describeMatrix("HTML security headers", (use) => {
  it.each(HTML_RESPONSES)("%s carries the page security headers", async (path, init) => {
    const res = await use().fetch(path, init);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toMatch(/unsafe-inline|script-src/);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    // The portal keeps same-origin so its forms' Origin is not sent as null.
    expect(res.headers.get("referrer-policy")).toBe(
      path.startsWith("/developers/") ? "same-origin" : "strict-origin-when-cross-origin",
    );
    if (init?.method !== "HEAD") {
      // The page's one inline stylesheet is the one the CSP allows by hash.
      const html = await res.text();
      const css = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? "";
      expect(csp).toContain(`'sha256-${createHash("sha256").update(css).digest("base64")}'`);
    }
  });

  it("/docs allows no form to post anywhere", async () => {
    const res = await use().fetch("/docs");
    expect(res.headers.get("content-security-policy")).toContain("form-action 'none'");
  });
});
