// Key digests on Bun: Bun's SHA-256 must give the very digests Node's crypto stored, or keys
// created by one runtime would not be found by the other (server/keys.ts `digestKey`).
import { expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { digestKey, generateKey } from "../../server/keys.ts";

it("digestKey on Bun equals node:crypto's SHA-256 hex for any key", () => {
  const keys = [generateKey("live"), generateKey("builder"), "", "mq_live_é✓", "x".repeat(1000)];
  for (const key of keys) expect(digestKey(key)).toBe(createHash("sha256").update(key, "utf8").digest("hex"));
});
