/**
 * The list path as its size is reported (test/bench/RESULTS.md, "What each mechanism buys"):
 * everything a list request runs through from access to the body, counted in lines (`wc -l`:
 * comments and blank lines included).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..", "..");
const FOLDERS = ["server/list", "server/limits"];
const FILES = [
  "server/access.ts",
  "server/ledger/redis-access.ts",
  "db/events-query.ts",
  "db/hydrate.ts",
  "db/geo.ts",
  "db/snapshot-stats.ts",
  "db/page-filter.ts",
  "db/snapshot-blocks.ts",
  "db/kept-scans.ts",
  "db/seen-once.ts",
  "db/two-generations.ts",
];

export function listPathLines(): { files: number; lines: number } {
  const paths = [
    ...FOLDERS.flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((f) => f.endsWith(".ts"))
        .map((f) => join(dir, f)),
    ),
    ...FILES.filter((p) => existsSync(join(ROOT, p))),
  ];
  const lines = paths.reduce((sum, p) => {
    const text = readFileSync(join(ROOT, p), "utf8");
    return sum + text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  }, 0);
  return { files: paths.length, lines };
}
