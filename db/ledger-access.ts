/**
 * Ledger tables for access: trials, usage, rate buckets (versions 10–19).
 * Placeholder until the access capability lands.
 */
import type { Migration } from "./migrate.ts";

export const ACCESS_MIGRATIONS: Migration[] = [];
