/**
 * The developer portal (docs/api.md, "Developer portal"), where account owners manage keys:
 *
 *   GET  /developers/sign-in?token=…       a one-time link: 303 to the keys page with a session cookie; else a 410 page
 *   GET  /developers/keys                  the keys page (HTML), or {account, keys, csrfToken} (JSON)
 *   POST /developers/keys                  creates a key {label?}: the key appears in this response only
 *   GET  /developers/keys/{id}/revoke      the confirmation step (HTML)
 *   POST /developers/keys/{id}/revoke      HTML: confirmation page, then with confirm=yes revokes; JSON: revokes
 *   POST /developers/sign-out              ends the session
 *
 * JSON with `Accept: application/json`, errors in the list envelope; HTML otherwise. Every answer
 * is `no-store`. State-changing requests pass the same-origin and CSRF checks before anything
 * else is read (server/portal/request.ts).
 */

import * as v from "valibot";
import { isStorageFailure } from "../../db/storage-failure.ts";
import type { AppContext } from "../context.ts";
import { ApiError, isApiError } from "../errors.ts";
import { handle, json, type RequestScope } from "../handle.ts";
import { renderServerError, renderTemporarilyUnavailable } from "../pages/handoff-page.ts";
import { pageResponse } from "../pages/layout.ts";
import {
  renderKeyNotFound,
  renderRequestRefused,
  renderRevokeConfirmation,
  renderSignedOut,
  renderSignInLinkGone,
  renderSignInNeeded,
} from "../pages/portal-messages.ts";
import { type KeysPageView, renderKeysPage } from "../pages/portal-page.ts";
import type { HtmlSecurity } from "../pages/security-headers.ts";
import { parsePathId } from "../pages/urls.ts";
import {
  type CreatedKey,
  createOwnerKey,
  describeAccount,
  listOwnerKeys,
  readOwnerKey,
  revokeOwnerKey,
} from "../portal/owner-keys.ts";
import {
  csrfTokenMatches,
  type PortalBody,
  presentedCsrfToken,
  readBody,
  sameOrigin,
  sessionCookie,
  sessionSetCookie,
  wantsJson,
} from "../portal/request.ts";
import { CreateDeveloperKeyRequest } from "../portal/schemas.ts";
import { type ActiveSession, endSession, resolveSession, signIn } from "../portal/sessions.ts";
import type { RouteTable } from "../route-table.ts";

/**
 * Portal pages: never cached, never framed, and their forms post only here; the referrer rule is
 * explained with the shared headers (server/pages/security-headers.ts).
 */
const PORTAL_SECURITY: HtmlSecurity = { formAction: "'self'", referrerPolicy: "same-origin" };
const NO_STORE = { "cache-control": "no-store" };

const portalError = (
  code: "invalid_request" | "invalid_session" | "invalid_csrf_token" | "not_found",
  message: string,
) => new ApiError(code, message, { envelope: "portal" });
const noSession = () => portalError("invalid_session", "Sign in to the developer portal with a sign-in link first.");
const csrfRefused = () =>
  portalError(
    "invalid_csrf_token",
    "The request lacks this session's CSRF token or comes from another site. Nothing was changed.",
  );
const keyNotFound = () => portalError("not_found", "This account has no key with that id.");

/** One request to the portal: its format, session and (after `guard`) body. */
interface PortalRequest {
  scope: RequestScope;
  json: boolean;
  now: number;
  active: ActiveSession | undefined;
}

type PortalHandler = (p: PortalRequest) => Response | Promise<Response>;

export function developerRoutes(app: RouteTable, ctx: AppContext): void {
  const base = ctx.config.baseUrl;

  const page = (status: number, body: string, headers: Record<string, string> = {}) =>
    pageResponse(status, body, { headers, security: PORTAL_SECURITY });

  /** HTML for a refusal a JSON client gets as the list envelope. */
  async function refusalPage(err: ApiError, p: PortalRequest): Promise<Response> {
    switch (err.code) {
      case "invalid_session":
        return page(401, renderSignInNeeded());
      case "invalid_csrf_token":
        return page(403, renderRequestRefused());
      case "not_found":
        return page(404, renderKeyNotFound());
      default:
        // Creation refusals (400, 409, 429) are shown on the keys page itself.
        return page(
          err.status,
          await keysPage(p.active!, p.now, { notice: { kind: "error", text: err.message } }),
          err.headers,
        );
    }
  }

  /** Wraps a portal route: the session, and errors as JSON envelopes or as pages. */
  const route = (fn: PortalHandler) =>
    handle(async (scope) => {
      const p: PortalRequest = { scope, json: wantsJson(scope.req), now: ctx.clock.now(), active: undefined };
      try {
        p.active = await resolveSession(ctx.ledger, sessionCookie(scope.req), p.now);
        scope.accountId = p.active?.account.id ?? null;
        return await fn(p);
      } catch (err) {
        // JSON clients get the list envelope (no-store, like every error) from `handle`.
        if (p.json) throw err;
        if (isApiError(err) && err.status < 500) return await refusalPage(err, p);
        if (isStorageFailure(err)) return page(503, renderTemporarilyUnavailable(), { "retry-after": "1" });
        ctx.log.error("unexpected error", {
          requestId: scope.requestId,
          method: scope.method,
          path: scope.path,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        });
        return page(500, renderServerError(scope.requestId));
      }
    }, "portal");

  /** Same origin, a session, and its CSRF token: else 403 or 401, and nothing changes. */
  async function guard(p: PortalRequest): Promise<{ active: ActiveSession; body: PortalBody | undefined }> {
    if (!sameOrigin(p.scope.req, p.scope.url, base)) throw csrfRefused();
    if (!p.active) throw noSession();
    const body = await readBody(p.scope.req);
    if (!csrfTokenMatches(p.active.session.csrfToken, presentedCsrfToken(p.scope.req, body))) throw csrfRefused();
    return { active: p.active, body };
  }

  async function keysPage(active: ActiveSession, now: number, extra: Partial<KeysPageView> = {}): Promise<string> {
    return renderKeysPage({
      account: await describeAccount(ctx.ledger, active.account, now),
      keys: await listOwnerKeys(ctx.ledger, active.account.id),
      csrfToken: active.session.csrfToken,
      ...extra,
    });
  }

  app.get(
    "/developers/sign-in",
    route(async (p) => {
      const token = p.scope.url.searchParams.get("token") ?? "";
      const signedIn = await signIn(ctx.ledger, token, p.now);
      if (!signedIn) return page(410, renderSignInLinkGone());
      // A browser signed in before (perhaps as another account) keeps only the new session.
      if (p.active) await endSession(ctx.ledger, p.active.digest);
      return new Response(null, {
        status: 303,
        headers: {
          location: "/developers/keys",
          "set-cookie": sessionSetCookie(base, signedIn.sessionId),
          ...NO_STORE,
          "referrer-policy": "no-referrer",
        },
      });
    }),
  );

  app.get(
    "/developers/keys",
    route(async (p) => {
      if (!p.active) throw noSession();
      const { account, session } = p.active;
      if (p.json) {
        const body = {
          account: await describeAccount(ctx.ledger, account, p.now),
          keys: await listOwnerKeys(ctx.ledger, account.id),
          csrfToken: session.csrfToken,
        };
        return json(body, 200, NO_STORE);
      }
      // After a revocation the page says which key it was (Post/Redirect/Get).
      const revokedId = parsePathId(p.scope.url.searchParams.get("revoked") ?? undefined);
      const revoked = revokedId === null ? undefined : await readOwnerKey(ctx.ledger, account.id, revokedId);
      const notice =
        revoked?.status === "revoked"
          ? {
              kind: "done" as const,
              text: `Key ${revoked.id} (${revoked.prefix}…) is revoked: requests with it are refused.`,
            }
          : undefined;
      return page(200, await keysPage(p.active, p.now, { notice }));
    }),
  );

  app.post(
    "/developers/keys",
    route(async (p) => {
      const { active, body } = await guard(p);
      if (!body) throw portalError("invalid_request", 'Send the label as JSON ({"label": …}) or as an HTML form.');
      const input = v.safeParse(CreateDeveloperKeyRequest, body);
      if (!input.success) {
        const err = portalError("invalid_request", input.issues[0].message);
        if (p.json) throw err;
        const label = typeof body.label === "string" ? body.label : "";
        return page(400, await keysPage(active, p.now, { notice: { kind: "error", text: err.message }, label }));
      }
      const label = input.output.label || null;
      let created: CreatedKey;
      try {
        created = await createOwnerKey(ctx.ledger, active.account, label, p.now);
      } catch (err) {
        if (p.json || !isApiError(err)) throw err;
        return page(
          err.status,
          await keysPage(active, p.now, { notice: { kind: "error", text: err.message }, label: label ?? "" }),
          err.headers,
        );
      }
      if (p.json) return json(created, 201, NO_STORE);
      return page(201, await keysPage(active, p.now, { created }));
    }),
  );

  app.get(
    "/developers/keys/:id/revoke",
    route(async (p) => {
      if (!p.active) throw noSession();
      const key = await ownKey(p.active, p.scope);
      if (key.status === "revoked") return redirectToKeys(key.id);
      return page(200, renderRevokeConfirmation(key, p.active.session.csrfToken));
    }),
  );

  app.post(
    "/developers/keys/:id/revoke",
    route(async (p) => {
      const { active, body } = await guard(p);
      const key = await ownKey(active, p.scope);
      if (p.json) {
        const revoked = (await revokeOwnerKey(ctx.ledger, active.account.id, key.id, p.now))!;
        return json({ id: revoked.id, status: revoked.status }, 200, NO_STORE);
      }
      // A browser revokes only from the confirmation step.
      if (body?.confirm !== "yes") {
        if (key.status === "revoked") return redirectToKeys(key.id);
        return page(200, renderRevokeConfirmation(key, active.session.csrfToken));
      }
      await revokeOwnerKey(ctx.ledger, active.account.id, key.id, p.now);
      return redirectToKeys(key.id);
    }),
  );

  app.post(
    "/developers/sign-out",
    route(async (p) => {
      // Without a session there is nothing to end; the cookie is cleared either way.
      if (p.active) {
        const { active } = await guard(p);
        await endSession(ctx.ledger, active.digest);
      } else if (!sameOrigin(p.scope.req, p.scope.url, base)) {
        throw csrfRefused();
      }
      const cookie = { "set-cookie": sessionSetCookie(base, null) };
      if (p.json) return new Response(null, { status: 204, headers: { ...cookie, ...NO_STORE } });
      return page(200, renderSignedOut(), cookie);
    }),
  );

  async function ownKey(active: ActiveSession, scope: RequestScope) {
    const id = parsePathId(scope.event?.context.params?.id);
    const key = id === null ? undefined : await readOwnerKey(ctx.ledger, active.account.id, id);
    if (!key) throw keyNotFound();
    return key;
  }
}

const redirectToKeys = (revokedId: number) =>
  new Response(null, { status: 303, headers: { location: `/developers/keys?revoked=${revokedId}`, ...NO_STORE } });
