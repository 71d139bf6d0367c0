#!/usr/bin/env bun
/**
 * What one random `events` row costs, the read a new list page makes for each event no cache
 * holds (docs/perf-history.md, "Round 9"): pages of 25 random ids read through SQLite's read
 * calls (the serving default) and through a memory map, and a bare 4 KiB read of the file at a
 * random place. CPU time per row (user and kernel), the last of four rounds (the first ones warm
 * the OS's file cache and the map).
 *
 *   bun test/bench/row-reads.ts [--db PATH] [--pages N]
 */
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import { REPLICA_DB } from "./lib/fixture.ts";

const { values } = parseArgs({ options: { db: { type: "string" }, pages: { type: "string" } } });
const path = values.db ?? REPLICA_DB;
const pages = Number(values.pages ?? 4000);

/** A fixed pseudo-random sequence, so both ways read the same rows. */
function ids(seed: number, max: number): () => number {
  let s = seed;
  return () => {
    s = (s * 48271) % 2147483647;
    return 1 + Math.floor((s / 2147483647) * max);
  };
}

function rowCost(mmapBytes: number): { cpuUs: number; kernelUs: number } {
  const db = new Database(path, { readonly: true });
  db.exec(`PRAGMA mmap_size = ${mmapBytes}`);
  const maxId = (db.query("SELECT max(id) AS m FROM events").get() as { m: number }).m;
  const read = db.query("SELECT e.id, e.title FROM json_each($ids) j JOIN events e ON e.id = j.value");
  let last = { cpuUs: 0, kernelUs: 0 };
  for (let round = 0; round < 4; round++) {
    const next = ids(round + 1, maxId);
    let rows = 0;
    const c0 = process.cpuUsage();
    for (let i = 0; i < pages; i++) {
      const page = Array.from({ length: 25 }, next);
      rows += read.all({ $ids: JSON.stringify(page) }).length;
    }
    const c = process.cpuUsage(c0);
    last = { cpuUs: (c.user + c.system) / rows, kernelUs: c.system / rows };
  }
  db.close();
  return last;
}

function preadCost(): { cpuUs: number; kernelUs: number } {
  const fd = openSync(path, "r");
  const blocks = Math.floor(statSync(path).size / 4096);
  const buf = Buffer.alloc(4096);
  const next = ids(7, blocks);
  const n = 100_000;
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) readSync(fd, buf, 0, 4096, (next() - 1) * 4096);
  const c = process.cpuUsage(c0);
  closeSync(fd);
  return { cpuUs: (c.user + c.system) / n, kernelUs: c.system / n };
}

const show = (name: string, r: { cpuUs: number; kernelUs: number }) =>
  console.log(`${name.padEnd(34)} ${r.cpuUs.toFixed(2)} µs CPU (${r.kernelUs.toFixed(2)} µs in the kernel)`);
show("a row, SQLite's read calls", rowCost(0));
show("a row, memory-mapped", rowCost(2 ** 31));
show("a bare 4 KiB read at a random place", preadCost());
