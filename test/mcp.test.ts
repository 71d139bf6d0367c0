/**
 * The MCP interface at /mcp, driven by the official SDK client (Streamable HTTP): against the
 * spawned Bun server over real HTTP, and in-process through the same client with the app's
 * fetch. Tools must answer exactly what REST answers and share REST's limits.
 */
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { HANDOFF } from "../db/contract.ts";
import { type Client, describeMatrix } from "./harness.ts";
import { eventRecord, venueRecord } from "./records.ts";

const NOW = "2030-03-01T12:00:00Z";

async function connect(c: Client, key: string): Promise<McpClient> {
  const target = c.target;
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", target.baseUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    // In-process there is no socket: the SDK client's requests go straight into the app; a pair
    // of servers answers for a public base URL that only its target can reach.
    ...(target.kind !== "bun"
      ? { fetch: (url: string | URL, init?: RequestInit) => target.fetch(String(url), init) }
      : {}),
  });
  const client = new McpClient({ name: "marquee-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

type ToolText = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
};
const errorOf = (r: ToolText) =>
  JSON.parse(r.content[0].text) as { status: number; error: { code: string }; retryAfterSeconds?: number };

describeMatrix("MCP tools", (use) => {
  let key: string;
  let mcp: McpClient;

  beforeAll(async () => {
    const c = use();
    await c.setClock(NOW);
    await c.records([
      venueRecord(501, { city: "Oakland" }),
      ...Array.from({ length: 7 }, (_, i) => eventRecord(5001 + i, 501, `2030-03-0${2 + (i % 3)}T20:00:00Z`)),
      eventRecord(5100, 501, "2030-03-05T20:00:00Z", { isSoldOut: true }),
    ]);
    key = await c.keyFor({ plan: "business" });
    mcp = await connect(c, key);
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("rejects a missing or unknown key with the REST 401 envelope and a Bearer challenge", async () => {
    const c = use();
    const attempts: Array<Record<string, string>> = [{}, { authorization: "Bearer mq_live_nope" }];
    for (const headers of attempts) {
      const res = await c.fetch("/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const body = (await res.json()) as { error: { code: string; requestId: string } };
      expect(body.error.code).toBe("invalid_api_key");
      expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
    }
  });

  it("answers GET with 405: the server keeps no sessions or streams", async () => {
    const res = await use().get("/mcp", key, { accept: "text/event-stream" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("lists both tools with input schemas from the same source as the OpenAPI document", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["create_ticket_handoff", "search_events"]);
    const doc = (await (await use().get("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; schema: Record<string, unknown> }> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
    };
    const search = tools.find((t) => t.name === "search_events")!;
    const params = doc.paths["/v1/events"].get.parameters!;
    expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(params.map((p) => p.name));
    for (const p of params) expect(search.inputSchema.properties![p.name]).toMatchObject(p.schema);
    const handoff = tools.find((t) => t.name === "create_ticket_handoff")!;
    const body = doc.components.schemas.TicketHandoffRequest;
    expect(handoff.inputSchema.properties).toEqual(body.properties);
    expect(handoff.inputSchema.required).toEqual(body.required);
  });

  it("search_events returns the same page as GET /v1/events and pages with its cursor", async () => {
    const c = use();
    const rest = (await (await c.get("/v1/events?city=Oakland&limit=3", key)).json()) as {
      data: Array<{ id: number }>;
      page: unknown;
    };
    const first = (await mcp.callTool({ name: "search_events", arguments: { city: "Oakland", limit: 3 } })) as ToolText;
    expect(first.isError).toBeFalsy();
    const page = first.structuredContent as {
      data: Array<{ id: number }>;
      page: { nextCursor: string | null; hasMore: boolean };
    };
    expect(page.data).toEqual(rest.data);
    expect(JSON.parse(first.content[0].text)).toEqual(page);

    const ids = page.data.map((e) => e.id);
    let cursor = page.page.nextCursor;
    while (cursor) {
      const next = (await mcp.callTool({
        name: "search_events",
        arguments: { city: "Oakland", limit: 3, cursor },
      })) as ToolText;
      const p = next.structuredContent as typeof page;
      ids.push(...p.data.map((e) => e.id));
      cursor = p.page.hasMore ? p.page.nextCursor : null;
    }
    expect(ids).toEqual([5001, 5004, 5007, 5002, 5005, 5003, 5006, 5100]);
  });

  it("passes booleans and repeated sources as REST query values", async () => {
    const r = (await mcp.callTool({
      name: "search_events",
      arguments: { exclude_sold_out: true, source: ["scraper:fillmore", "nothing-here"], limit: 100 },
    })) as ToolText;
    const ids = (r.structuredContent as { data: Array<{ id: number }> }).data.map((e) => e.id);
    expect(ids).toHaveLength(7);
    expect(ids).not.toContain(5100);
  });

  it("maps REST errors to tool errors carrying the documented code and status", async () => {
    const bad = (await mcp.callTool({ name: "search_events", arguments: { limit: 0 } })) as ToolText;
    expect(bad.isError).toBe(true);
    expect(errorOf(bad)).toMatchObject({ status: 400, error: { code: "invalid_limit" } });
    const paged = (await mcp.callTool({ name: "search_events", arguments: { offset: 10 } })) as ToolText;
    expect(errorOf(paged)).toMatchObject({ status: 400, error: { code: "unsupported_pagination" } });
    const missing = (await mcp.callTool({
      name: "create_ticket_handoff",
      arguments: { event_id: 999999 },
    })) as ToolText;
    expect(errorOf(missing)).toMatchObject({ status: 404, error: { code: "event_unavailable" } });
    const extra = (await mcp.callTool({
      name: "create_ticket_handoff",
      arguments: { event_id: 5001, url: "https://x" },
    })) as ToolText;
    expect(errorOf(extra)).toMatchObject({ status: 400, error: { code: "invalid_request" } });
  });

  it("search_events spends the same rolling row budget as REST, across keys", async () => {
    const c = use();
    const account = await c.account({ plan: "enterprise", rowBudget: 3, email: "mcp-rows@example.com" });
    const [k1, k2] = [await c.key(account), await c.key(account)];
    const client = await connect(c, k1);
    try {
      const first = (await client.callTool({ name: "search_events", arguments: { limit: 2 } })) as ToolText;
      expect((first.structuredContent as { page: { count: number } }).page.count).toBe(2);
      const rest = await c.get("/v1/events?limit=5", k2);
      expect(((await rest.json()) as { page: { count: number } }).page.count).toBe(1);
      expect(rest.headers.get("x-rowbudget-remaining")).toBe("0");
      const over = (await client.callTool({ name: "search_events", arguments: { limit: 1 } })) as ToolText;
      expect(over.isError).toBe(true);
      expect(errorOf(over)).toMatchObject({ status: 429, error: { code: "row_budget_exhausted" } });
      expect(errorOf(over).retryAfterSeconds).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("create_ticket_handoff returns the REST handoff and shares the per-account limit with REST", async () => {
    const c = use();
    const account = await c.account({ plan: "business", email: "mcp-handoffs@example.com" });
    const [k1, k2] = [await c.key(account), await c.key(account)];
    const client = await connect(c, k1);
    try {
      const created = (await client.callTool({
        name: "create_ticket_handoff",
        arguments: { event_id: 5001 },
      })) as ToolText;
      expect(created.isError).toBeFalsy();
      expect(created.structuredContent).toMatchObject({
        event_id: 5001,
        booking_mode: "external_checkout",
        requires_user_action: true,
      });
      // The limit is per account, across keys and interfaces: 1 by MCP so far, 9 more by REST.
      for (let i = 0; i < HANDOFF.creationsPerMinute - 1; i++) {
        const res = await c.postJson("/v1/ticket-handoffs", { event_id: 5001 }, { authorization: `Bearer ${k2}` });
        expect(res.status).toBe(201);
      }
      const over = (await client.callTool({
        name: "create_ticket_handoff",
        arguments: { event_id: 5001 },
      })) as ToolText;
      expect(errorOf(over)).toMatchObject({
        status: 429,
        error: { code: "rate_limit_exceeded" },
        retryAfterSeconds: HANDOFF.retryAfterS,
      });
    } finally {
      await client.close();
    }
  });
});
