/**
 * Node entry for the bundled server. `server/main.ts` only runs itself under Bun
 * (`import.meta.main`), and Node 20 cannot load .ts files, so the benchmark bundles this file
 * with `bun build server/entry-node.ts --target=node --external better-sqlite3 --external bun:sqlite`
 * and runs the result with `node`. The SQLite driver is picked at run time (db/driver.ts), so
 * under Node this serves through better-sqlite3.
 */
import { main } from "./main.ts";

main(process.argv.slice(2)).then((code) => {
  if (code !== undefined) process.exitCode = code;
});
