/**
 * The admin listener (`--admin-port N`, `--admin-host`, default 127.0.0.1; docs/operations.md,
 * Logs and metrics): `/metrics` in the Prometheus text format, `/livez` and `/readyz`, on a
 * port of their own so the metrics are never on the public one. A lone server answers for
 * itself; a `--workers` supervisor answers for all its workers (server/workers.ts).
 *
 * It is a plain `node:http` server on either runtime: a scrape a second needs nothing faster.
 */
import { createServer } from "node:http";
import { type Check, type Health, type Readiness, readinessBody } from "./health.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics-text.ts";
import type { ScrapeWorkers } from "./workers.ts";

export interface AdminAnswers {
  /** The Prometheus text and its content type. */
  metrics(): Promise<{ text: string; contentType: string }>;
  /** `workers`: a supervisor's per-worker summary. */
  readiness(): Promise<Pick<Readiness, "ready" | "checks" | "failing"> & { workers?: object[] }>;
}

export interface AdminListener {
  /** The port bound (the one asked for, or the kernel's pick for 0). */
  port: number;
  close(): Promise<void>;
}

const JSON_TYPE = "application/json; charset=utf-8";

export async function listenAdmin(
  options: { port: number; host: string },
  answers: AdminAnswers,
  onError: (err: unknown) => void,
): Promise<AdminListener> {
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    try {
      if (req.method !== "GET" && req.method !== "HEAD") send(405, JSON_TYPE, '{"error":"method not allowed"}');
      else if (path === "/livez") send(200, JSON_TYPE, '{"status":"ok"}');
      else if (path === "/readyz") {
        const r = await answers.readiness();
        const body = r.workers ? { ...readinessBody(r), workers: r.workers } : readinessBody(r);
        send(r.ready ? 200 : 503, JSON_TYPE, JSON.stringify(body));
      } else if (path === "/metrics") {
        const { text, contentType } = await answers.metrics();
        send(200, contentType, text);
      } else send(404, JSON_TYPE, '{"error":"not found: the admin port serves /metrics, /livez and /readyz"}');
    } catch (err) {
      onError(err);
      if (!res.headersSent) send(500, JSON_TYPE, '{"error":"internal error"}');
      else res.destroy();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: options.port, host: options.host }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A lone server's answers: its own metrics and readiness. */
export function serverAnswers(health: Health, metrics: Metrics): AdminAnswers {
  return {
    async metrics() {
      const { renderMetrics } = await import("./metrics-text.ts");
      return renderMetrics([await metrics.families(health)]);
    },
    async readiness() {
      const { ready, checks, failing } = await health.readiness();
      return { ready, checks, failing };
    },
  };
}

/**
 * A `--workers` supervisor's answers: its workers' metrics merged (counters summed), and ready
 * only when every worker answered and is ready. Each check fails when it fails on any worker;
 * `workers` fails when one did not answer.
 */
export function supervisorAnswers(scrape: ScrapeWorkers): AdminAnswers {
  return {
    async metrics() {
      const { renderMetrics } = await import("./metrics-text.ts");
      const answered = (await scrape()).flatMap((w) => (w.answered ? [w.families] : []));
      return renderMetrics(answered);
    },
    async readiness() {
      const workers = await scrape();
      const checks: Record<string, Check> = {};
      for (const w of workers) {
        if (!w.answered) continue;
        for (const [name, check] of Object.entries(w.readiness.checks)) {
          const seen = checks[name];
          if (!check!.ok && (!seen || seen.ok))
            checks[name] = { ok: false, detail: `worker ${w.worker}: ${check!.detail}` };
          else if (!seen) checks[name] = check!;
        }
      }
      const silent = workers.filter((w) => !w.answered).map((w) => w.worker);
      checks.workers =
        silent.length === 0
          ? { ok: true, detail: `${workers.length} workers answered` }
          : { ok: false, detail: `worker ${silent.join(", ")} did not answer` };
      const failing = Object.keys(checks).filter((name) => !checks[name].ok) as Readiness["failing"];
      return {
        ready: failing.length === 0,
        checks,
        failing,
        workers: workers.map((w) =>
          w.answered
            ? { worker: w.worker, status: w.readiness.ready ? "ready" : "not ready", failing: w.readiness.failing }
            : { worker: w.worker, status: "no answer" },
        ),
      };
    },
  };
}

/** Starts the admin listener, its address logged once it listens. */
export async function startAdmin(
  log: Logger,
  where: { port: number; host: string },
  answers: AdminAnswers,
): Promise<AdminListener> {
  const admin = await listenAdmin(where, answers, (err) =>
    log.error(`admin listener: ${(err as Error)?.stack ?? err}`),
  );
  const host = where.host.includes(":") ? `[${where.host}]` : where.host;
  log.info(`admin listener on http://${host}:${admin.port} (/metrics, /livez, /readyz)`);
  return admin;
}
