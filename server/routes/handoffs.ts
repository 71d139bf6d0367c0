import type { H3 } from "h3";
import type { AppContext } from "../context.ts";

/** POST /v1/ticket-handoffs — placeholder until the handoff capability lands. */
export function handoffRoutes(_app: H3, _ctx: AppContext): void {}
