import { afterAll, beforeAll, expect, it } from "vitest";
import { Client, startInProcess, type Target } from "./harness.ts";

// The harness checks every documented response against /v1/openapi.json; prove it refuses one.
let real: Target;
beforeAll(async () => {
  real = await startInProcess();
});
afterAll(() => real.close());

it("throws on a response of a documented operation that breaks the published contract", async () => {
  const broken: Target = {
    ...real,
    fetch: async (path, init) =>
      new URL(path, real.baseUrl).pathname === "/v1/events"
        ? new Response(JSON.stringify({ data: 5 }), { status: 200, headers: { "content-type": "application/json" } })
        : real.fetch(path, init),
  };
  await expect(new Client(broken).get("/v1/events", "mq_live_x")).rejects.toThrow(/does not conform/);
});

it("passes real responses through unchanged", async () => {
  const res = await new Client(real).get("/v1/events");
  expect(res.status).toBe(401);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
});
