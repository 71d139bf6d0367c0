// The node:http listener on Bun (server/node-http.ts), which a server on a Redis ledger uses:
// requests reach the fast routes and the app as Web Requests, and their Responses come back
// whole (status, every header, the body and its length in bytes), answered at once or late.
import { afterAll, beforeAll, expect, it } from "bun:test";
import { connect } from "node:net";
import { listenNodeHttp, type NodeHttpListener } from "../../server/node-http.ts";
import { freePort } from "../net.ts";

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
  const fast = new Map<string, (req: Request) => Response | Promise<Response>>([
    [
      "GET /fast",
      (req) => new Response(`fast ${new URL(req.url).search}`, { headers: { "content-type": "text/plain" } }),
    ],
    ["GET /late", late],
    // A route that answers HEAD with a body, which must not be sent.
    ["HEAD /late", late],
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

it("hands a fast route its Request by method and path, the query string kept, and everything else to the app", async () => {
  const fast = await fetch(`${base}/fast?x=1`);
  expect(await fast.text()).toBe("fast ?x=1");
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

it("answers HEAD with the headers and no body", async () => {
  const res = await fetch(`${base}/late`, { method: "HEAD" });
  expect(res.status).toBe(201);
  expect(res.headers.get("x-one")).toBe("1");
  expect(await res.text()).toBe("");
});

it("answers 500 when the app throws, and 400 for a Host that makes no URL", async () => {
  expect((await fetch(`${base}/throws`)).status).toBe(500);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () =>
      socket.write("GET /fast HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n"),
    );
    let got = "";
    socket.on("data", (d) => {
      got += d.toString("latin1");
    });
    socket.on("end", () => resolve(got));
    socket.on("error", reject);
  });
  expect(raw).toMatch(/^HTTP\/1\.1 400 /);
});
