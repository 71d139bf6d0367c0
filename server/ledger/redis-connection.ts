/**
 * Connections to a Redis ledger (docs/several-servers.md, "Run several servers"). One place decides
 * how long a command may take and what happens while Redis is away, so every caller fails the
 * same way: within `REDIS_LEDGER.commandTimeoutMs`, with an error the caller turns into its
 * stage's 503, never a hang.
 *
 * - `commandTimeout`: a command with no reply in time rejects (Redis stopped or overloaded);
 * - `enableOfflineQueue: false`: while disconnected, commands reject at once instead of queueing;
 * - the client reconnects by itself (backoff capped at `reconnectMaxMs`), so serving recovers
 *   without a restart when Redis answers again;
 * - `enableAutoPipelining`: commands issued in the same tick share one write, so concurrent
 *   requests do not each pay a round trip's system calls;
 * - after a command timed out, the connection is dropped and made again: until Redis answers its
 *   ready check, every command rejects at once, so a request never waits out more than one
 *   timeout, however many ledger steps it has.
 *
 * A URL that names a node of a Redis Cluster gets a client of the whole cluster, with the same
 * settings for each node: it sends each command to the node that owns its key's slot.
 */
import { Cluster, Redis, type RedisOptions } from "ioredis";

/** A connection to one Redis, or to every node of a Redis Cluster. */
export type RedisClient = Redis | Cluster;

export const REDIS_LEDGER = {
  /** Longest wait for any ledger command before the request answers 503. */
  commandTimeoutMs: 500,
  connectTimeoutMs: 1_000,
  reconnectMaxMs: 1_000,
} as const;

/** The URL as logs may show it: no password. */
export function displayRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    u.username = "";
    return u.href;
  } catch {
    return "redis://(invalid URL)";
  }
}

/**
 * The database `url` names (0 when none). Throws a one-line error naming the problem when `url`
 * is not a usable redis:// URL.
 */
export function checkRedisUrl(url: string): number {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--ledger: not a URL; expected redis://[user:password@]host:port[/db]`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    throw new Error(`--ledger: ${u.protocol}// is not supported; expected redis://[user:password@]host:port[/db]`);
  const db = u.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) throw new Error(`--ledger: database "${db}" is not a number`);
  return Number(db);
}

/**
 * A client for `url`. `subscriber` clients may block on SUBSCRIBE, so they get no command
 * timeout. The first connection is awaited: an unreachable Redis is an error at start-up.
 */
export async function connectRedis(url: string, options: { subscriber?: boolean } = {}): Promise<RedisClient> {
  const db = checkRedisUrl(url);
  const settings: RedisOptions = {
    connectTimeout: REDIS_LEDGER.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(50 * 2 ** times, REDIS_LEDGER.reconnectMaxMs),
    ...(options.subscriber
      ? { enableOfflineQueue: true }
      : { commandTimeout: REDIS_LEDGER.commandTimeoutMs, enableOfflineQueue: false, enableAutoPipelining: true }),
  };
  const node = await connected(url, new Redis(url, { ...settings, lazyConnect: true }), options);
  if (!(await node.info("cluster")).includes("cluster_enabled:1")) {
    // The client selects the URL's database as it connects, but when Redis refuses it (a number
    // past the server's `databases`) it goes on in database 0: refuse to start instead.
    if (db !== 0) {
      try {
        await node.select(db);
      } catch (err) {
        node.disconnect();
        throw new Error(`the Redis ledger at ${displayRedisUrl(url)} has no database ${db}: ${(err as Error).message}`);
      }
    }
    return node;
  }
  node.disconnect();
  if (db !== 0)
    throw new Error(`the Redis ledger at ${displayRedisUrl(url)} is a Redis Cluster: it has database 0 only`);
  const u = new URL(url);
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  const cluster = new Cluster([{ host, port: Number(u.port || 6379) }], {
    lazyConnect: true,
    enableOfflineQueue: settings.enableOfflineQueue,
    // The cluster client groups auto-pipelined commands by node from their keys, and cannot for
    // a script whose key count comes with each call (the request path's takes): it sends them
    // one by one.
    enableAutoPipelining: false,
    clusterRetryStrategy: settings.retryStrategy,
    slotsRefreshTimeout: REDIS_LEDGER.connectTimeoutMs,
    redisOptions: {
      ...settings,
      username: decodeURIComponent(u.username) || undefined,
      password: decodeURIComponent(u.password) || undefined,
      tls: u.protocol === "rediss:" ? {} : undefined,
    },
  });
  return connected(url, cluster, options);
}

/** `client` once it has connected, with its errors logged and its timeouts failing fast. */
async function connected<C extends RedisClient>(url: string, client: C, options: { subscriber?: boolean }): Promise<C> {
  // ioredis reports connection errors as events too; the commands' rejections carry them to
  // callers. Before the first connection the error is the start-up failure's, said once below.
  let connected = false;
  let lastError: Error | undefined;
  let logged = false;
  client.on("error", (err: Error) => {
    lastError = err;
    if (connected && !logged) console.error(`ledger: ${displayRedisUrl(url)}: ${err.message}`);
    logged = connected;
  });
  client.on("ready", () => {
    logged = false;
  });
  if (!options.subscriber) failFastAfterTimeouts(client);
  try {
    await client.connect();
    connected = true;
  } catch (err) {
    client.disconnect();
    const cause = lastError?.message ?? (err as Error).message;
    throw new Error(`cannot reach the Redis ledger at ${displayRedisUrl(url)}: ${cause}`);
  }
  return client;
}

/**
 * A Redis that stopped answering keeps its TCP connection: each command would wait out its own
 * timeout. The first timeout instead reconnects the client, whose commands reject at once (no
 * offline queue) until the new connection is ready, that is until Redis answers again.
 */
function failFastAfterTimeouts(client: RedisClient): void {
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => unknown;
  client.sendCommand = ((command: Parameters<Redis["sendCommand"]>[0], ...rest: unknown[]) => {
    const result = send(command, ...rest);
    command.promise.catch((err: Error) => {
      if (err?.message === "Command timed out" && client.status === "ready") client.disconnect(true);
    });
    return result;
  }) as typeof client.sendCommand;
}
