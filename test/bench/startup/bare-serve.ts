// The runtime's own start (test/bench/startup.ts): a bare `Bun.serve` on a free port that prints
// where it listens, as `marquee serve --port 0` does, and answers every request at once.
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
console.log(`listening on http://127.0.0.1:${server.port}`);
