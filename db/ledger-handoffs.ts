/**
 * Ledger tables for ticket handoffs and recorded clicks (versions 20–29).
 * Placeholder until the handoff capability lands.
 */
import type { Migration } from "./migrate.ts";

export const HANDOFF_MIGRATIONS: Migration[] = [];
