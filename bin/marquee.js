#!/usr/bin/env node
// `npx marquee …`: runs the CLI on the Bun that npm installed with the package, as a child that
// this process stands for (docs/operations.md, Signals and exit codes): every signal it can catch is passed on,
// it exits with the child's status (or the child's signal), and it names itself to the child
// (MARQUEE_PARENT_PID), which stops when this process is gone, even after a SIGKILL.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUN_MISSING, BUN_SERVE_ARGS, findBun } from "./find-bun.js";

/**
 * The signals passed on: every one a process may catch and another process would send, so not
 * the terminal's job control (SIGTSTP, SIGTTIN and SIGTTOU stop this process as they would any
 * other) nor those the kernel sends about this process itself (SIGPIPE, SIGCHLD, SIGXCPU, …).
 */
const FORWARDED = [
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGTERM",
  "SIGUSR1",
  "SIGUSR2",
  "SIGALRM",
  "SIGWINCH",
  "SIGCONT",
  "SIGPWR",
].filter((name) => name in constants.signals);

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bun = findBun();
if (!bun) {
  console.error(BUN_MISSING);
  process.exit(1);
}
const child = spawn(bun, [...BUN_SERVE_ARGS, join(root, "server", "main.ts"), ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, MARQUEE_PARENT_PID: String(process.pid) },
});
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of FORWARDED) process.on(signal, forward);
child.once("error", (err) => {
  console.error(`marquee: cannot run ${bun}: ${err.message}`);
  process.exit(1);
});
child.once("exit", (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  // Ended by a signal: end the same way, so whoever started this process sees what happened.
  for (const s of FORWARDED) process.off(s, forward);
  process.kill(process.pid, signal);
  // A signal this process ignores or survives (SIGCONT, SIGWINCH): the shell's convention.
  setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
});
