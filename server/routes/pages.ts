import type { H3 } from "h3";
import type { AppContext } from "../context.ts";

/** HTML pages (events, handoffs) and ticket redirects — placeholder until they land. */
export function pageRoutes(_app: H3, _ctx: AppContext): void {}
