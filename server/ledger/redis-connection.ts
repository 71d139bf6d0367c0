/**
 * Connections to a Redis ledger (docs/operations.md, "Run several servers"). One place decides
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
 */
import { Redis, type RedisOptions } from "ioredis";

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
export async function connectRedis(url: string, options: { subscriber?: boolean } = {}): Promise<Redis> {
  const db = checkRedisUrl(url);
  const extra: RedisOptions = options.subscriber
    ? { enableOfflineQueue: true }
    : {
        commandTimeout: REDIS_LEDGER.commandTimeoutMs,
        enableOfflineQueue: false,
        enableAutoPipelining: true,
      };
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: REDIS_LEDGER.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(50 * 2 ** times, REDIS_LEDGER.reconnectMaxMs),
    ...extra,
  });
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
  // The client selects the URL's database as it connects, but when Redis refuses it (a number
  // past the server's `databases`) it goes on in database 0: refuse to start instead.
  if (db !== 0) {
    try {
      await client.select(db);
    } catch (err) {
      client.disconnect();
      throw new Error(`the Redis ledger at ${displayRedisUrl(url)} has no database ${db}: ${(err as Error).message}`);
    }
  }
  return client;
}

/**
 * A Redis that stopped answering keeps its TCP connection: each command would wait out its own
 * timeout. The first timeout instead reconnects the client, whose commands reject at once (no
 * offline queue) until the new connection is ready, that is until Redis answers again.
 */
function failFastAfterTimeouts(client: Redis): void {
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command, stream) => {
    const result = send(command, stream);
    command.promise.catch((err: Error) => {
      if (err?.message === "Command timed out" && client.status === "ready") client.disconnect(true);
    });
    return result;
  }) as typeof client.sendCommand;
}
