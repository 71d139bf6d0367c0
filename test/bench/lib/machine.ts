/**
 * What the figures were measured on: commit, date, CPU, memory and runtime versions.
 * RESULTS.md is only comparable with runs on the same description.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { BUN, ROOT } from "./config.ts";

export interface Machine {
  commit: string;
  dirty: boolean;
  date: string;
  nproc: number;
  cpuModel: string;
  memoryGb: number;
  kernel: string;
  bun: string;
  node: string;
  wrk: string;
  /** 1-minute load average when the run started: other work on the machine skews every figure. */
  loadAverage: number;
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  } catch (err) {
    // wrk --version exits 1 after printing its banner.
    const out = (err as { stdout?: string }).stdout;
    return typeof out === "string" && out.trim() ? out.trim() : "unknown";
  }
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (m) return m[1].trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? "unknown";
}

export function describeMachine(): Machine {
  return {
    commit: sh("git", ["rev-parse", "--short", "HEAD"]),
    dirty: sh("git", ["status", "--porcelain", "--untracked-files=no"]) !== "",
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    nproc: Number(sh("nproc", [])) || cpus().length,
    cpuModel: cpuModel(),
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: sh("uname", ["-sr"]),
    bun: sh(BUN, ["--version"]),
    node: sh("node", ["--version"]),
    wrk: sh("wrk", ["--version"])
      .split("\n")[0]
      .replace(/ Copyright.*$/, ""),
    loadAverage: Math.round(loadavg()[0] * 100) / 100,
  };
}
