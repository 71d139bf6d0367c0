/**
 * A process's memory figures from Linux's /proc/PID/status, read in one place for the server's
 * memory guard (server/background.ts), the benchmark and the soak test (docs/performance.md).
 * Private memory is `RssAnon` (plus `VmSwap` where swap counts); `VmRSS` adds the mapped
 * file pages, among them a memory-mapped replica's, which are the operating system's cache.
 */
import { readFileSync } from "node:fs";

/** The status's "Name: N kB" fields, in KiB, by name; null where the file cannot be read (not Linux, gone). */
export function procStatusKiB(pid: number | "self"): Map<string, number> | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  const fields = new Map<string, number>();
  for (const [, name, kib] of status.matchAll(/^(\w+):\s+(\d+) kB$/gm)) fields.set(name, Number(kib));
  return fields;
}
