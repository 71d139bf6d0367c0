/**
 * The service URLs the API hands out and the pages answer (docs/upstream-records.md; docs/api.md, Ticket handoffs): `eventUrl` and
 * `ticketUrl` come from db/contract.ts, which the events list uses too; `handoff_url` =
 * `{base_url}/handoffs/{handoff_id}`.
 */
import { randomBase62 } from "../keys.ts";

export { eventUrlFor, servedTicketUrl, ticketUrlFor } from "../../db/contract.ts";

export function handoffUrlFor(baseUrl: string, handoffId: string): string {
  return `${baseUrl}/handoffs/${handoffId}`;
}

/** A path id: decimal digits without a leading zero, within safe integers; else null (404). */
export function parsePathId(raw: string | undefined): number | null {
  if (!raw || !/^[1-9]\d{0,15}$/.test(raw)) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}

/** Handoff ids are `ho_` + 22 base62 characters (about 131 random bits). */
export const HANDOFF_ID_PATTERN = /^ho_[0-9A-Za-z]{22}$/;

export function newHandoffId(): string {
  return `ho_${randomBase62(22)}`;
}
