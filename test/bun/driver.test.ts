// The driver contract on Bun: bun:sqlite (test/driver-contract.ts; vitest runs it on Node).
import { describe, expect, it } from "bun:test";
import { openDb, runtimeDriver } from "../../db/driver.ts";
import { driverContract } from "../driver-contract.ts";

it("Bun picks bun:sqlite", () => expect(runtimeDriver).toBe("bun:sqlite"));

driverContract({ describe, it, expect }, runtimeDriver, openDb);
