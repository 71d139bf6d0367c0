// Batches parsed by the writer, on Node (the writer in-thread): see test/sync-handoff.ts.
import { describe, expect, it } from "vitest";
import { handOffSuite } from "./sync-handoff.ts";

handOffSuite({ describe, it, expect });
