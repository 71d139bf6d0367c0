/**
 * The server's log (docs/operations.md, Logs and metrics): one line per answered request, and the
 * server's own lines (sync, errors) in the same format. `json`: one object a line with at least
 * `time`, `level` and `msg`; `text`: the same fields for a person reading a terminal.
 *
 * Lines below `--log-level` are not written. Where they go: everything to `--log-file PATH` when
 * given; otherwise debug and info lines (the request lines among them) to standard output and
 * warn and error lines to standard error. Request lines are buffered and written behind the
 * requests (server/log-sink.ts).
 *
 * A line never holds a key, a session, a sign-in token, a CSRF token or a URL password: request
 * lines have the path without its query string (key-shaped parts masked), and callers pass
 * display forms of URLs.
 */
import { bufferedSink, type LineSink, syncSink } from "./log-sink.ts";
import { type RequestRecord, redactPath } from "./request-record.ts";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogOptions {
  format: LogFormat;
  level: LogLevel;
  /** Every line to this file (appended); unset: standard output and standard error. */
  file?: string;
  /** Under `serve --workers N`: the worker's index, on every line. */
  worker?: number;
}

export type LogFields = Record<string, string | number | boolean | null | undefined>;

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export class Logger {
  /** Whether request lines (info) are written at all: when not, the request path skips them. */
  requests: boolean;
  #rank: number;
  readonly #json: boolean;
  /** `,"worker":N` for JSON lines, ` worker=N` for text, or "". */
  readonly #worker: string;
  /** The last request line's time and its ISO form: requests in the same millisecond share it. */
  #timeMs = Number.NaN;
  #timeIso = "";
  /** The last request line's method and path, and their JSON fields (`#target`). */
  #lastMethod = "";
  #lastPath = "";
  #lastTarget = "";

  constructor(
    readonly options: LogOptions,
    private readonly low: LineSink,
    private readonly high: LineSink,
  ) {
    this.#rank = RANK[options.level];
    this.#json = options.format === "json";
    this.requests = this.#rank <= RANK.info;
    this.#worker =
      options.worker === undefined ? "" : this.#json ? `,"worker":${options.worker}` : ` worker=${options.worker}`;
  }

  /** The least severe lines written from now on (SIGHUP re-reads it: server/serving.ts `reload`). */
  setLevel(level: LogLevel): void {
    this.#rank = RANK[level];
    this.requests = this.#rank <= RANK.info;
  }

  debug(msg: string, fields?: LogFields): void {
    this.line("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.line("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.line("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.line("error", msg, fields);
  }

  line(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (RANK[level] < this.#rank) return;
    const time = new Date().toISOString();
    const sink = RANK[level] >= RANK.warn ? this.high : this.low;
    if (this.#json) {
      const head = JSON.stringify({ time, level, msg, ...fields });
      sink.write(`${head.slice(0, -1)}${this.#worker}}\n`);
    } else {
      let text = `${time} ${level.toUpperCase()} ${msg}`;
      for (const [name, value] of Object.entries(fields))
        if (value !== undefined) text += ` ${name}=${textValue(value)}`;
      sink.write(`${text}${this.#worker}\n`);
    }
  }

  /** The request line: built by hand (it is written for every request), its fields in a fixed order. */
  request(r: RequestRecord): void {
    if (!this.requests) return;
    if (r.time !== this.#timeMs) {
      this.#timeMs = r.time;
      this.#timeIso = new Date(r.time).toISOString();
    }
    const time = this.#timeIso;
    const ms = Math.round(r.durationMs * 1000) / 1000;
    if (this.#json) {
      this.low.write(
        `{"time":"${time}","level":"info","msg":"request","requestId":"${r.requestId}",${this.#target(r.method, r.path)},"status":${r.status},"code":${r.code === null ? "null" : `"${r.code}"`},"accountId":${r.accountId},"keyId":${r.keyId},"rows":${r.rows},"durationMs":${ms}${this.#worker}}\n`,
      );
    } else {
      const path = redactPath(r.path);
      this.low.write(
        `${time} INFO request ${textValue(r.method)} ${textValue(path)} ${r.status} ${ms}ms rows=${r.rows} code=${r.code ?? "-"} accountId=${r.accountId ?? "-"} keyId=${r.keyId ?? "-"} requestId=${r.requestId}${this.#worker}\n`,
      );
    }
  }

  /**
   * `"method":…,"path":…` of a JSON request line, kept for the last method and path seen: most
   * lines repeat them, and the redaction and escaping are the line's costliest part.
   */
  #target(method: string, path: string): string {
    if (method !== this.#lastMethod || path !== this.#lastPath) {
      this.#lastMethod = method;
      this.#lastPath = path;
      this.#lastTarget = `"method":${jsonString(method)},"path":${jsonString(redactPath(path))}`;
    }
    return this.#lastTarget;
  }

  /** Writes what is buffered now (before the process exits). */
  flush(): void {
    this.low.flushSync();
    this.high.flushSync();
  }

  close(): void {
    this.low.close();
    if (this.high !== this.low) this.high.close();
  }
}

/** A string as a JSON string: quoted as is when nothing in it needs escaping (the usual path). */
function jsonString(s: string): string {
  return /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** A value in a text line: quoted when it has a space, a quote or a control character. */
function textValue(value: string | number | boolean | null): string {
  const s = String(value);
  return /^[\x21\x23-\x7e]*$/.test(s) && s !== "" ? s : JSON.stringify(s);
}

/**
 * The start-up and stop lines (docs/operations.md, Logs and metrics): in the log's format, but on
 * standard output at every level and written at once, because a process that starts the server
 * reads its address there (with `--port 0`, the only place besides `--ready-file`), and
 * `--log-level warn` or `--log-file` must not hide it.
 */
export function announce(format: LogFormat, msg: string, fields: LogFields = {}): void {
  const stdout = syncSink(1);
  // A text line is read by a person: its message already names what the fields hold.
  new Logger({ format, level: "info" }, stdout, stdout).info(msg, format === "json" ? fields : {});
}

/** The log `marquee serve` writes, as configured (docs/operations.md, Configuration). */
export function createLogger(options: LogOptions): Logger {
  const droppedLine = (count: number) =>
    options.format === "json"
      ? `{"time":"${new Date().toISOString()}","level":"warn","msg":"log lines dropped: the destination did not keep up","dropped":${count}}\n`
      : `${new Date().toISOString()} WARN log lines dropped: the destination did not keep up dropped=${count}\n`;
  if (options.file !== undefined) {
    const file = bufferedSink({ path: options.file }, droppedLine);
    return new Logger(options, file, file);
  }
  return new Logger(options, bufferedSink({ fd: 1 }, droppedLine), syncSink(2));
}

/**
 * The log of an app context made without one (tests, benchmarks, tools): no request lines, and
 * warnings and errors on standard error as text, written at once.
 */
export function quietLogger(): Logger {
  const stderr = syncSink(2);
  return new Logger({ format: "text", level: "warn" }, stderr, stderr);
}
