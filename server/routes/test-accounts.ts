import type { H3 } from "h3";
import type { AppContext } from "../context.ts";

/** /_test/accounts… — placeholder until the ledger capability lands. */
export function testAccountRoutes(_app: H3, _ctx: AppContext): void {}
