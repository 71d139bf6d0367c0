// The node:http listener on Bun (server/node-http.ts), which a server on a Redis ledger uses:
// fast routes get a scope over node's request and may reply in parts, every other request
// reaches the app as a Web Request, and replies come back whole (status, every header, the body
// and its length in bytes), answered at once or late.
import { afterAll, beforeAll, expect, it } from "bun:test";
import { connect } from "node:net";
import { listeningHost } from "../../server/announce.ts";
import { ReplyParts } from "../../server/handle.ts";
import { listenNodeHttp, type NodeHttpListener, type ScopedRoute } from "../../server/node-http.ts";
import { freePort } from "../net.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);

const later = () => new Promise((resolve) => setImmediate(resolve));

let listener: NodeHttpListener;
let base: string;
let port: number;

beforeAll(async () => {
  port = await freePort();
  const late = async () => {
    await later();
    const headers = new Headers({ "content-type": "application/json; charset=utf-8", "x-one": "1" });
    headers.append("set-cookie", "a=1; Path=/");
    headers.append("set-cookie", "b=2; Path=/");
    return new Response(JSON.stringify({ city: "Zürich ✓" }), { status: 201, headers });
  };
  const parts = () => new ReplyParts(203, { "content-type": "text/plain", "x-two": "2" }, utf8("héllo wörld"));
  const fast = new Map<string, ScopedRoute>([
    [
      "GET /fast",
      (scope) =>
        new Response(`fast ${scope.search} ${scope.url.searchParams.get("x")} ${scope.header("x-asked")}`, {
          headers: { "content-type": "text/plain" },
        }),
    ],
    // The Web Request is built when a route asks for it, with the client's Host.
    ["GET /request", (scope) => new Response(`${new URL(scope.req.url).host} ${scope.req.headers.get("x-asked")}`)],
    ["GET /head-size", (scope) => new Response(String(scope.headTooLarge()))],
    ["PATCH /method", (scope) => new Response(scope.method)],
    ["GET /late", late],
    // Routes that answer HEAD with a body, which must not be sent.
    ["HEAD /late", late],
    [
      "GET /parts",
      async () => {
        await later();
        return parts();
      },
    ],
    ["HEAD /parts", parts],
    ["GET /parts-text", () => new ReplyParts(200, { "content-type": "application/json" }, '{"city":"Zürich ✓"}')],
  ]);
  const app = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    if (url.pathname === "/echo") return new Response(await req.text(), { headers: { "content-type": "text/plain" } });
    if (url.pathname === "/bytes") return new Response(new Uint8Array([0, 255, 1, 254]));
    if (url.pathname === "/throws") throw new Error("not rendered");
    return new Response(`app ${req.method} ${url.pathname} ${req.headers.get("x-asked")}`, {
      status: 404,
      headers: { "content-type": "text/plain" },
    });
  };
  listener = await listenNodeHttp(app, fast, { port, hostname: "127.0.0.1" });
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await listener.close();
});

it("hands a fast route its scope by method and path, the query string kept, and everything else to the app", async () => {
  const fast = await fetch(`${base}/fast?x=1`, { headers: { "x-asked": "yes" } });
  expect(await fast.text()).toBe("fast ?x=1 1 yes");
  expect(await (await fetch(`${base}/fast?`)).text()).toBe("fast  null null");
  const request = await fetch(`${base}/request`, { headers: { "x-asked": "also" } });
  expect(await request.text()).toBe(`127.0.0.1:${port} also`);
  expect(await (await fetch(`${base}/head-size`)).text()).toBe("false");
  expect(await (await fetch(`${base}/method`, { method: "PATCH" })).text()).toBe("PATCH");
  const other = await fetch(`${base}/elsewhere`, { headers: { "x-asked": "yes" } });
  expect(other.status).toBe(404);
  expect(await other.text()).toBe("app GET /elsewhere yes");
  const post = await fetch(`${base}/fast`, { method: "POST" });
  expect(await post.text()).toBe("app POST /fast null");
});

it("writes a late Response whole: status, headers, both cookies, and the length of its UTF-8 body", async () => {
  const res = await fetch(`${base}/late`);
  expect(res.status).toBe(201);
  expect(res.headers.get("x-one")).toBe("1");
  expect(res.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
  const body = JSON.stringify({ city: "Zürich ✓" });
  expect(Number(res.headers.get("content-length"))).toBe(Buffer.byteLength(body));
  expect(await res.text()).toBe(body);
});

it("streams a request body to the route, and sends a binary body byte for byte", async () => {
  const text = "é".repeat(40_000);
  const echo = await fetch(`${base}/echo`, { method: "POST", body: text });
  expect(await echo.text()).toBe(text);
  const bytes = await fetch(`${base}/bytes`);
  expect([...new Uint8Array(await bytes.arrayBuffer())]).toEqual([0, 255, 1, 254]);
});

it("writes a reply in parts: status, headers, the body and its length in bytes", async () => {
  const res = await fetch(`${base}/parts`);
  expect(res.status).toBe(203);
  expect(res.headers.get("x-two")).toBe("2");
  expect(Number(res.headers.get("content-length"))).toBe(Buffer.byteLength("héllo wörld"));
  expect(await res.text()).toBe("héllo wörld");
  const text = await fetch(`${base}/parts-text`);
  expect(Number(text.headers.get("content-length"))).toBe(Buffer.byteLength('{"city":"Zürich ✓"}'));
  expect(await text.json()).toEqual({ city: "Zürich ✓" });
  const head = await fetch(`${base}/parts`, { method: "HEAD" });
  expect(head.status).toBe(203);
  expect(head.headers.get("x-two")).toBe("2");
  expect(await head.text()).toBe("");
});

it("answers HEAD with the headers and no body", async () => {
  const res = await fetch(`${base}/late`, { method: "HEAD" });
  expect(res.status).toBe(201);
  expect(res.headers.get("x-one")).toBe("1");
  expect(await res.text()).toBe("");
});

/** Sends `head` as it is and returns everything the server wrote before closing. */
const rawExchange = (head: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(head));
    let got = "";
    socket.on("data", (d) => {
      got += d.toString("latin1");
    });
    socket.on("end", () => resolve(got));
    socket.on("error", reject);
  });

it("answers 500 when the app throws, and 400 for a Host that makes no URL where a Web Request is needed", async () => {
  expect((await fetch(`${base}/throws`)).status).toBe(500);
  expect(await rawExchange("GET /elsewhere HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n")).toMatch(
    /^HTTP\/1\.1 400 /,
  );
  // A fast route's scope resolves its URL against the listening address: the Host does not matter.
  const fast = await rawExchange("GET /fast?x=2 HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n");
  expect(fast).toMatch(/^HTTP\/1\.1 200 /);
  expect(fast).toContain("fast ?x=2 2 null");
});

it("gives a fast route a repeated header field's values joined, as a Web Request's headers would", async () => {
  const got = await rawExchange(
    "GET /fast HTTP/1.1\r\nHost: x\r\nX-Asked: one\r\nX-Asked: two\r\nConnection: close\r\n\r\n",
  );
  const joined = new Request("http://x/", {
    headers: [
      ["x-asked", "one"],
      ["x-asked", "two"],
    ],
  }).headers.get("x-asked");
  expect(got).toContain(`fast  null ${joined}`);
});

it("names the listening address as a URL's host, IPv6 literals in brackets", () => {
  for (const [hostname, host] of [
    ["0.0.0.0", "0.0.0.0:8080"],
    ["localhost", "localhost:8080"],
    ["::", "[::]:8080"],
    ["::1", "[::1]:8080"],
  ]) {
    expect(listeningHost(hostname, 8080)).toBe(host);
    // A fast route's URL is made from it: it must parse.
    expect(new URL(`http://${listeningHost(hostname, 8080)}/v1/events?x=1`).searchParams.get("x")).toBe("1");
  }
});
