// The driver contract on Node: better-sqlite3 (test/driver-contract.ts; Bun runs it in test/bun).
import { describe, expect, it } from "vitest";
import { openDb, runtimeDriver } from "../db/driver.ts";
import { driverContract } from "./driver-contract.ts";

it("Node picks better-sqlite3", () => expect(runtimeDriver).toBe("better-sqlite3"));

driverContract({ describe, it, expect }, runtimeDriver, openDb);
