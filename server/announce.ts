/**
 * What a server tells the world once it answers (docs/operations.md, The program): the start-up
 * line, which names the address bound and the base URL separately, and the ready file a parent
 * process may wait for (`--ready-file`). A lone server writes both; under `--workers N` the
 * supervisor does, once every worker listens (server/workers.ts).
 */
import { renameSync, rmSync, writeFileSync } from "node:fs";
import type { Config } from "./config.ts";

/** An address and port as a URL's host: an IPv6 literal (`--host ::`) in brackets. */
export function listeningHost(hostname: string, port: number): string {
  return `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
}

/** A server bound to every address answers on loopback: the URL a process on the same machine uses. */
const LOOPBACK_FOR: Record<string, string> = { "0.0.0.0": "127.0.0.1", "::": "::1" };

/** The URL that reaches the server from this machine: the address bound, loopback for a wildcard. */
export function reachableUrl(host: string, port: number): string {
  return `http://${listeningHost(LOOPBACK_FOR[host] ?? host, port)}`;
}

/** `config` is the bound one (server/config.ts, `withBoundPort`): its port is the real one. */
export function startupLine(config: Config): string {
  const notes = [`base URL ${config.baseUrl}`, `replica ${config.dbPath}`];
  if (config.testMode) notes.push("test mode");
  if (config.workers > 1) notes.push(`${config.workers} workers`);
  return `Marquee listening on http://${listeningHost(config.host, config.port)} (${notes.join(", ")})`;
}

/** The start-up line's fields in a JSON log: the address bound, the base URL, the replica. */
export function startupFields(config: Config): Record<string, string | number | boolean> {
  return {
    url: `http://${listeningHost(config.host, config.port)}`,
    baseUrl: config.baseUrl,
    replica: config.dbPath,
    testMode: config.testMode,
    workers: config.workers,
  };
}

/**
 * Writes `{"url", "pid"}` to `path` in one step: a temporary file beside it, then renamed over it,
 * so a reader never sees half of it. `pid` is the process to signal: the server, or the supervisor.
 */
export function writeReadyFile(path: string, config: Config): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ url: reachableUrl(config.host, config.port), pid: process.pid })}\n`);
  renameSync(tmp, path);
}

/** On a clean stop: a ready file must not name a server that is gone. */
export function removeReadyFile(path: string): void {
  rmSync(path, { force: true });
}
