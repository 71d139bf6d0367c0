/**
 * The ceiling: a bare Bun.serve that answers each benchmark request with the exact
 * bytes Marquee returned for it, captured beforehand. Nothing is computed per request beyond a
 * map lookup, so its requests/second is the HTTP limit of this runtime on this machine.
 *
 *   bun test/bench/ceiling.ts --port P --bodies FILE
 *
 * FILE is JSON: [{ method, path, status, contentType, body }], `path` including the query string.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface CapturedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: string;
}

const { values } = parseArgs({ options: { port: { type: "string" }, bodies: { type: "string" } } });
if (!values.port || !values.bodies) {
  console.error("usage: bun test/bench/ceiling.ts --port P --bodies FILE");
  process.exit(2);
}

const captured = JSON.parse(readFileSync(values.bodies, "utf8")) as CapturedResponse[];
// Blobs: Bun sends a Blob as it is but copies an ArrayBuffer into every response, and Marquee
// answers with Blobs too (server/list/page-cache.ts PageOut).
const answers = new Map<string, { status: number; headers: Record<string, string>; body: Blob }>();
for (const c of captured) {
  answers.set(`${c.method} ${c.path}`, {
    status: c.status,
    headers: { "content-type": c.contentType },
    body: new Blob([new TextEncoder().encode(c.body)]),
  });
}

const server = Bun.serve({
  port: Number(values.port),
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = req.url;
    // Path and query after the authority: the key of the captured answer.
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    const answer = answers.get(`${req.method} ${path}`);
    if (!answer) return path === "/healthz" ? new Response("ok") : new Response("not captured", { status: 404 });
    // A body must be read for POSTs, as any server would.
    if (req.method === "POST") await req.arrayBuffer();
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  },
});

console.log(`ceiling listening on ${server.url} with ${answers.size} captured answers`);
