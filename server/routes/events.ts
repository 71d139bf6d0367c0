import type { H3 } from "h3";
import type { AppContext } from "../context.ts";

/** GET /v1/events — placeholder until the events-list capability lands. */
export function eventsRoutes(_app: H3, _ctx: AppContext): void {}
