/**
 * The route wrapper (server/handle.ts) with routes that answer asynchronously, as the list route
 * does on a Redis ledger: a rejected promise renders exactly like the same error thrown (status,
 * envelope, the ApiError's headers, the scope's early headers, x-request-id), through both ways in
 * (h3 and the direct router), and a reply in parts comes out of either as the same Response.
 */
import { H3 } from "h3";
import { describe, expect, it } from "vitest";
import { ApiError } from "../server/errors.ts";
import { direct, h3Handler, handle, ReplyParts, type RequestScope } from "../server/handle.ts";

const limited = () =>
  new ApiError("rate_limited", "Too many requests for this key. Retry after the delay in Retry-After.", {
    headers: { "Retry-After": "7", "X-RateLimit-Remaining": "0" },
  });

/** The route's early headers (decided before the refusal), then the refusal. */
function refuse(scope: RequestScope): never {
  scope.headers["X-RateLimit-Limit"] = "60";
  scope.headers["X-Trial-RowBudget-Remaining"] = "12";
  throw limited();
}

const routes = {
  thrown: (scope: RequestScope) => refuse(scope),
  rejected: async (scope: RequestScope) => {
    await new Promise((r) => setTimeout(r, 1));
    return refuse(scope);
  },
  unexpectedThrown: (): Response => {
    throw new Error("boom");
  },
  unexpectedRejected: async (): Promise<Response> => {
    await new Promise((r) => setTimeout(r, 1));
    throw new Error("boom");
  },
  fine: async () => new Response("ok"),
  // A reply in parts reaching a way in that hands over Responses (its scope does not take parts).
  parts: async () => new ReplyParts(203, { "content-type": "text/plain", "x-one": "1" }, utf8("héllo wörld")),
};

function utf8(s: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;
}

async function shape(res: Response) {
  const body = await res.json().catch(() => null);
  const id = res.headers.get("x-request-id");
  expect(id).toBeTruthy();
  if (body?.error) expect(body.error.requestId).toBe(id);
  const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== "x-request-id"));
  return { status: res.status, headers, body: body?.error ? { ...body.error, requestId: "…" } : body };
}

describe("asynchronous routes", () => {
  const app = new H3();
  for (const [name, fn] of Object.entries(routes)) app.get(`/h3/${name}`, h3Handler(handle(fn)));
  const viaH3 = (name: string) => app.fetch(new Request(`http://x/h3/${name}`));
  const viaDirect = async (name: string) =>
    direct(handle(routes[name as keyof typeof routes]))(new Request(`http://x/direct/${name}`));

  for (const [way, call] of [
    ["h3", viaH3],
    ["direct", viaDirect],
  ] as const) {
    it(`renders a rejected promise exactly like a thrown error (${way})`, async () => {
      const thrown = await shape(await call("thrown"));
      expect(thrown).toMatchObject({
        status: 429,
        headers: {
          "retry-after": "7",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-limit": "60",
          "x-trial-rowbudget-remaining": "12",
        },
        body: { code: "rate_limited" },
      });
      expect(await shape(await call("rejected"))).toEqual(thrown);

      const original = console.error;
      console.error = () => {};
      try {
        const unexpected = await shape(await call("unexpectedThrown"));
        expect(unexpected).toMatchObject({ status: 500, body: { code: "internal_error" } });
        expect(JSON.stringify(unexpected)).not.toContain("boom");
        expect(await shape(await call("unexpectedRejected"))).toEqual(unexpected);
      } finally {
        console.error = original;
      }
      const fine = await call("fine");
      expect(fine.status).toBe(200);
      expect(fine.headers.get("x-request-id")).toBeTruthy();
      const parts = await call("parts");
      expect({ status: parts.status, one: parts.headers.get("x-one"), text: await parts.text() }).toEqual({
        status: 203,
        one: "1",
        text: "héllo wörld",
      });
      expect(parts.headers.get("x-request-id")).toBeTruthy();
    });
  }
});
