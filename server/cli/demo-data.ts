/**
 * `marquee demo-data [--events N] [--seed S] [--anchor YYYY-MM-DD] [--out FILE]` (docs/operations.md, The program):
 * writes the deterministic demo record stream. Same flags, same bytes.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { DEMO } from "../../db/contract.ts";
import { type DemoSummary, parseAnchor, writeDemoData } from "../../sync/demo/generate.ts";
import { isPostgresUrl, parsePostgresUrl } from "../../sync/postgres/schema.ts";
import { type Command, intFlag, parseFlags, UsageError } from "./args.ts";

/** Writes to stdout, waiting for the pipe to drain so a slow reader never buffers the stream. */
function stdoutSink(chunk: string): void | Promise<void> {
  if (process.stdout.write(chunk)) return;
  return new Promise((resolve) => process.stdout.once("drain", () => resolve()));
}

/** A reader that stops early (`marquee demo-data | head`) is not an error. */
function exitQuietlyOnClosedPipe(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
}

export const demoDataCommand: Command = {
  usage: `marquee demo-data [--events N] [--seed S] [--anchor YYYY-MM-DD] [--out FILE] [--json]

  --events N     events to generate (default ${DEMO.events.toLocaleString("en-US")}); venues, updates and deletes come on top
  --seed S       any string (default "${DEMO.seed}"); the same seed writes the same bytes
  --anchor DAY   the day event dates are relative to (default ${DEMO.anchor}); \`serve --demo\` uses today
  --out FILE     write here instead of stdout
  --out postgres://user:password@host:port/db[?schema=NAME]
                 write the same data set into the upstream tables there (created when missing;
                 each row as the stream leaves it: its last version, deleted rows absent)

Then: marquee sync --from FILE`,
  async run(argv) {
    const { values } = parseFlags(argv, {
      events: { type: "string" },
      seed: { type: "string" },
      anchor: { type: "string" },
      out: { type: "string" },
    });
    const events = intFlag("events", values.events, 1) ?? DEMO.events;
    if (events > DEMO.maxEvents) throw new UsageError(`--events must be at most ${DEMO.maxEvents}`);
    const anchor = values.anchor ?? DEMO.anchor;
    try {
      parseAnchor(anchor);
    } catch (err) {
      throw new UsageError(`--anchor: ${(err as Error).message}`);
    }
    const options = { events, seed: values.seed ?? DEMO.seed, anchor };

    let summary: DemoSummary;
    if (values.out && isPostgresUrl(values.out)) {
      summary = await writeToPostgres(values.out, options);
    } else if (values.out) {
      const fd = openSync(values.out, "w");
      try {
        summary = await writeDemoData(options, (chunk) => void writeSync(fd, chunk));
      } finally {
        closeSync(fd);
      }
    } else {
      exitQuietlyOnClosedPipe();
      summary = await writeDemoData(options, stdoutSink);
    }
    const out =
      values.out && isPostgresUrl(values.out) ? `postgres ${parsePostgresUrl(values.out).display}` : values.out;
    const result = { ...summary, seed: options.seed, anchor, out: out ?? null };
    const human =
      `wrote ${summary.records.toLocaleString("en-US")} records (${summary.events.toLocaleString("en-US")} events, ` +
      `${summary.venues.toLocaleString("en-US")} venues, last seq ${summary.lastSeq}) to ${out ?? "stdout"}`;
    // With the stream on stdout, the summary goes to stderr so the stream stays clean.
    const print = values.out ? console.log : console.error;
    print(values.json ? JSON.stringify(result) : human);
    return 0;
  },
};

/** COPY into the upstream tables, with a progress line on a terminal. */
async function writeToPostgres(
  url: string,
  options: { events: number; seed: string; anchor: string },
): Promise<DemoSummary> {
  const source = parsePostgresUrl(url);
  // The PostgreSQL client loads for a postgres:// destination only.
  const [{ connect }, { writeDemoToPostgres }] = await Promise.all([
    import("../../sync/postgres/connect.ts"),
    import("../../sync/postgres/demo.ts"),
  ]);
  const client = await connect(source);
  const tty = Boolean(process.stderr.isTTY);
  const started = performance.now();
  try {
    const summary = await writeDemoToPostgres(client, source, options, (records) => {
      if (!tty) return;
      const rate = (records * 1000) / Math.max(1, performance.now() - started);
      process.stderr.write(
        `\r\x1b[2Kwriting to ${source.display}  ${records.toLocaleString("en-US")} records  ${Math.round(rate).toLocaleString("en-US")} records/s`,
      );
    });
    if (tty) process.stderr.write("\r\x1b[2K");
    return summary;
  } finally {
    await client.end().catch(() => {});
  }
}
