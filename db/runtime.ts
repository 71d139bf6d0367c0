/**
 * The one place that tells the runtimes apart. Marquee runs on Bun (`npx marquee`, the single
 * binary) and on Node (the Vitest suites, the bundled Node server); the SQLite adapter, the
 * sync writer thread and the scheduler priority all follow this.
 */
export const onBun: boolean = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";
