/**
 * The one route table. Route modules add their routes here; the h3 app (server/app.ts) serves
 * every entry, and on Bun the entries marked `fast` are also handed to `Bun.serve`'s own router
 * (server/listen.ts), which calls the same handler without h3's event and response layers.
 */
import type { H3Scope, Recording, RequestRecorder, RequestScope, RouteHandler } from "./handle.ts";

export type Method = "GET" | "HEAD" | "POST" | "PATCH" | "DELETE" | "ALL";

export interface RouteEntry {
  method: Method;
  path: string;
  handler: RouteHandler<H3Scope> | RouteHandler<RequestScope>;
  /** Also served by Bun's router: the handler must not need h3's event (path parameters). */
  fast: boolean;
}

export class RouteTable {
  readonly entries: RouteEntry[] = [];
  #dispatch: ((req: Request) => Promise<Response>) | undefined;

  /** `recorder`: where every entry point records the requests it answers (server/requests.ts). */
  constructor(readonly recorder?: RequestRecorder) {}

  /** How a route's answered requests are recorded: under its path pattern. */
  recording(path: string): Recording | undefined {
    return this.recorder && { recorder: this.recorder, route: path };
  }

  get(path: string, handler: RouteHandler<H3Scope>): void {
    this.add("GET", path, handler);
  }
  head(path: string, handler: RouteHandler<H3Scope>): void {
    this.add("HEAD", path, handler);
  }
  post(path: string, handler: RouteHandler<H3Scope>): void {
    this.add("POST", path, handler);
  }
  patch(path: string, handler: RouteHandler<H3Scope>): void {
    this.add("PATCH", path, handler);
  }
  delete(path: string, handler: RouteHandler<H3Scope>): void {
    this.add("DELETE", path, handler);
  }
  all(path: string, handler: RouteHandler<H3Scope>): void {
    this.add("ALL", path, handler);
  }
  /** A route whose handler needs only the Request: served by h3 and by Bun's router alike. */
  fast(method: Exclude<Method, "ALL">, path: string, handler: RouteHandler<RequestScope>): void {
    this.entries.push({ method, path, handler, fast: true });
  }

  private add(method: Method, path: string, handler: RouteHandler<H3Scope>): void {
    this.entries.push({ method, path, handler, fast: false });
  }

  /** Set by the app once built: lets a route (MCP) send a request through the whole app. */
  bindDispatch(dispatch: (req: Request) => Promise<Response>): void {
    this.#dispatch = dispatch;
  }

  dispatch(req: Request): Promise<Response> {
    if (!this.#dispatch) throw new Error("the route table is not served by an app yet");
    return this.#dispatch(req);
  }
}
