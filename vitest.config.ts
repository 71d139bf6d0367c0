import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The README's and docs/testing.md's Vitest examples import the package by its name; here that
  // name is this checkout's source (`npm run test:package` runs them against the packed tarball).
  resolve: { alias: { "marquee/testing": fileURLToPath(new URL("./testing/index.ts", import.meta.url)) } },
  test: {
    include: ["test/**/*.test.ts", "test/package/*-example.ts"],
    exclude: ["test/bun/**", "node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
