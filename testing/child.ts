/**
 * The server `startMarquee` spawns (docs/testing.md, "In a Node or Bun test suite"): `marquee serve
 * --test-mode` on Bun, tied to the process that started it. Its temporary folder is removed when
 * it exits, and it exits when its parent goes away, however the parent ends (a test runner killed
 * with SIGKILL runs no cleanup of its own): stdin is a pipe from the parent, and the pipe closing
 * is the signal (`serve --exit-with-stdin`).
 *
 * Demo data is written as an NDJSON file in the folder and loaded with `serve --sync-from`, so it
 * is in the replica before the port opens, through the same sync path as any upstream feed. The
 * generator is loaded only then: an empty instance starts without it.
 *
 * usage: bun testing/child.ts <temp folder> <demo events> <demo anchor day> <demo seed> <serve flags…>
 */
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { main } from "../server/main.ts";

const DEMO_RESYNC_S = 2_000_000;

const [dir, demoEvents, demoAnchor, demoSeed, ...serveFlags] = process.argv.slice(2);
if (!dir || !demoSeed) {
  console.error("usage: bun testing/child.ts <temp folder> <demo events> <demo anchor day> <demo seed> <serve flags…>");
  process.exit(2);
}

process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

// `serve` installs its own SIGTERM/SIGINT handlers as it starts (close, then exit). Before
// that, this one ends the process so that the exit handler above still removes the folder.
const stopEarly = () => {
  if (process.listenerCount("SIGTERM") <= 1) process.exit(0);
};
process.on("SIGTERM", stopEarly);
process.on("SIGINT", stopEarly);

if (Number(demoEvents) > 0) {
  const { writeDemoData } = await import("../sync/demo/generate.ts");
  const file = join(dir, "demo.ndjson");
  const fd = openSync(file, "w");
  try {
    await writeDemoData(
      { events: Number(demoEvents), seed: demoSeed, anchor: demoAnchor },
      (chunk) => void writeSync(fd, chunk),
    );
  } finally {
    closeSync(fd);
  }
  // The file never grows, so the periodic re-read is pushed out as far as a timer reaches
  // (2^31 - 1 ms, about 24.8 days; a longer delay would fire every millisecond).
  serveFlags.push("--sync-from", file, "--sync-interval", String(DEMO_RESYNC_S));
}

const code = await main(["serve", "--test-mode", "--exit-with-stdin", ...serveFlags]);
// `serve` returns only when it could not start (e.g. the port was taken).
process.exit(code ?? 1);
