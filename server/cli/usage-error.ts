/** A command used wrongly: one line naming what is wrong, exit 2 (server/main.ts). */
export class UsageError extends Error {}
