/**
 * CPU time of the processes being measured, from /proc/<pid>/stat (utime + stime, every thread of
 * the process): read before and after a measured slice, divided by the requests it served, it is
 * what one request costs each process, however many cores the machine has.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of utime and stime (USER_HZ; 100 on Linux). */
const TICKS_PER_S = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  pgrp: number;
  cpuS: number;
}

/** Fields after the command name, which is in parentheses and may itself hold spaces and parentheses. */
function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // proc(5): field 5 is pgrp, 14 utime, 15 stime; f[0] is field 3.
    return { pgrp: Number(f[2]), cpuS: (Number(f[11]) + Number(f[12])) / TICKS_PER_S };
  } catch {
    return null; // gone, or not Linux
  }
}

/** CPU seconds used so far by one process, or NaN when it cannot be read. */
export function processCpuS(pid: number): number {
  return readStat(pid)?.cpuS ?? Number.NaN;
}

/**
 * CPU seconds used so far by every live process in a process group: a server the bench started
 * (lib/proc.ts starts each in its own group) with the workers a `--workers` supervisor started.
 */
export function groupCpuS(pgid: number): number {
  let total = 0;
  let found = false;
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (stat?.pgrp !== pgid) continue;
    total += stat.cpuS;
    found = true;
  }
  return found ? total : Number.NaN;
}
