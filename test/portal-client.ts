/**
 * A signed-in developer-portal browser over a test target: keeps the session cookie and the CSRF
 * token, and sends requests the way a browser form or a JSON client would. Every response body
 * it sees is recorded, so a suite can prove where a key's value appeared.
 */
import { expect } from "vitest";
import type { Client } from "./harness.ts";

export const JSON_ACCEPT = { accept: "application/json" };
export const FORM = { "content-type": "application/x-www-form-urlencoded" };
export const HTML_ACCEPT = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

export interface Created {
  id: number;
  kind: string;
  label: string | null;
  prefix: string;
  key: string;
  createdAt: string;
}

/** The `{url}` of a new sign-in link for the account (test mode). */
export async function signInLink(c: Client, accountId: number): Promise<string> {
  const res = await c.postJson(`/_test/accounts/${accountId}/sign-in-link`, {});
  expect(res.status).toBe(201);
  const { url } = (await res.json()) as { url: string };
  return url;
}

/** Path and query of a URL the target handed out, for `Client.fetch`. */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/** Opens a sign-in URL; returns the response (303 with a cookie when it worked). */
export function openLink(c: Client, url: string, headers: Record<string, string> = {}): Promise<Response> {
  return c.fetch(pathOf(url), { headers: { ...HTML_ACCEPT, ...headers } });
}

export class PortalSession {
  /** Every response body this session received, in order. */
  readonly bodies: string[] = [];
  csrf = "";

  constructor(
    readonly c: Client,
    readonly cookie: string,
  ) {}

  /** Signs in as the account's owner through a fresh link. */
  static async open(c: Client, accountId: number): Promise<PortalSession> {
    const res = await openLink(c, await signInLink(c, accountId));
    expect(res.status).toBe(303);
    const setCookie = res.headers.get("set-cookie")!;
    const session = new PortalSession(c, setCookie.split(";")[0]);
    session.csrf = ((await session.json("GET", "/developers/keys")).body as { csrfToken: string }).csrfToken;
    return session;
  }

  async send(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: string } = {},
  ): Promise<Response> {
    const res = await this.c.fetch(path, {
      method,
      headers: { cookie: this.cookie, ...init.headers },
      body: init.body,
    });
    this.bodies.push(await res.clone().text());
    return res;
  }

  /** A JSON request with the session's CSRF token (unless `headers` says otherwise). */
  async json(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await this.send(method, path, {
      headers: {
        ...JSON_ACCEPT,
        ...(method === "GET" ? {} : { "x-csrf-token": this.csrf }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.clone().text();
    return { res, status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  }

  /** An HTML form post, with the CSRF token field unless `fields` sets its own. */
  form(path: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
    const body = new URLSearchParams({ csrf_token: this.csrf, ...fields });
    return this.send("POST", path, { headers: { ...HTML_ACCEPT, ...FORM, ...headers }, body: body.toString() });
  }

  page(path = "/developers/keys"): Promise<Response> {
    return this.send("GET", path, { headers: HTML_ACCEPT });
  }

  async create(label?: string): Promise<Created> {
    const r = await this.json("POST", "/developers/keys", label === undefined ? {} : { label });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body as Created;
  }

  async keys(): Promise<Array<{ id: number; status: string; label: string | null; prefix: string; kind: string }>> {
    const r = await this.json("GET", "/developers/keys");
    expect(r.status).toBe(200);
    return (r.body as { keys: never[] }).keys;
  }
}

/** `GET /v1/events` status with the key. */
export async function listStatus(c: Client, key: string): Promise<number> {
  const res = await c.get("/v1/events", key);
  await res.arrayBuffer();
  return res.status;
}

/** `POST /mcp` (tools/list) status with the key. */
export async function mcpStatus(c: Client, key: string): Promise<number> {
  const res = await c.fetch("/mcp", {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await res.arrayBuffer();
  return res.status;
}

export const errorCodeOf = (body: unknown) => (body as { error: { code: string } }).error.code;
