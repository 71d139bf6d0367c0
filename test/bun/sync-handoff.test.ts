// Batches parsed by the writer, on Bun with the writer on its own thread: see test/sync-handoff.ts.
import { describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openReplica } from "../../db/replica.ts";
import { openWriter } from "../../sync/writer.ts";
import { handOffSuite } from "../sync-handoff.ts";

it("a run of unknown size gets a writer thread that parses", async () => {
  const dir = mkdtempSync(join(tmpdir(), "marquee-handoff-"));
  const db = await openReplica(join(dir, "replica.db"));
  try {
    const writer = await openWriter(db, undefined);
    expect({ threaded: writer.threaded, parses: writer.parses }).toEqual({ threaded: true, parses: true });
    await writer.close();
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

handOffSuite({ describe, it, expect });
