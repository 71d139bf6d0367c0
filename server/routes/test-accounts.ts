/**
 * Test-mode accounts and keys (docs/api.md, Test mode): the same operations as `marquee accounts` and
 * `marquee keys`, over HTTP, an account's state as the request path counts it
 * (server/routes/test-account-state.ts), and the owner's sign-in link to the developer portal.
 */

import * as v from "valibot";
import { KEY_KINDS } from "../../db/contract.ts";
import { parseAccountInput } from "../account-input.ts";
import type { AppContext } from "../context.ts";
import { json } from "../handle.ts";
import { issueKey } from "../keys.ts";
import { createSignInLink } from "../portal/sessions.ts";
import type { RouteTable } from "../route-table.ts";
import { readAccountState } from "./test-account-state.ts";
import { testHandle } from "./test-handle.ts";

const bad = (message: string, status = 400) => json({ error: { code: "invalid_request", message } }, status);

async function body(req: Request): Promise<unknown> {
  try {
    return await req.json();
  } catch {
    return undefined;
  }
}

/** `POST /_test/accounts/{id}/keys`: the key's kind, `live` unless given. */
export const KeyInput = v.strictObject({ kind: v.optional(v.picklist(KEY_KINDS), "live") });

const accountId = (raw: string | undefined) => (raw && /^\d+$/.test(raw) ? Number(raw) : NaN);

export function testAccountRoutes(app: RouteTable, ctx: AppContext): void {
  app.post(
    "/_test/accounts",
    testHandle(async ({ req }) => {
      const input = parseAccountInput(await body(req));
      if (!input.ok) return bad(input.message);
      if (!input.fields.email) return bad("email is required");
      const account = await ctx.ledger.createAccount(input.fields, ctx.clock.now());
      return json(account, 201);
    }),
  );

  app.get(
    "/_test/accounts/:id",
    testHandle(async ({ event }) => {
      const account = await ctx.ledger.readAccount(accountId(event.context.params?.id));
      return account ? json(await readAccountState(ctx, account)) : bad("no such account", 404);
    }),
  );

  app.patch(
    "/_test/accounts/:id",
    testHandle(async ({ event, req }) => {
      const input = parseAccountInput(await body(req));
      if (!input.ok) return bad(input.message);
      const id = accountId(event.context.params?.id);
      const account = await ctx.ledger.updateAccount(id, input.fields, ctx.clock.now());
      return account ? json(account) : bad("no such account", 404);
    }),
  );

  app.post(
    "/_test/accounts/:id/sign-in-link",
    testHandle(async ({ event }) => {
      const link = await createSignInLink(
        ctx.ledger,
        ctx.config.baseUrl,
        accountId(event.context.params?.id),
        ctx.clock.now(),
      );
      return link ? json(link, 201) : bad("no such account", 404);
    }),
  );

  app.post(
    "/_test/accounts/:id/keys",
    testHandle(async ({ event, req }) => {
      const id = accountId(event.context.params?.id);
      if (!(await ctx.ledger.readAccount(id))) return bad("no such account", 404);
      const input = v.safeParse(KeyInput, (await body(req)) ?? {});
      if (!input.success) return bad(`kind must be one of ${KEY_KINDS.join(", ")}`);
      const issued = await issueKey(ctx.ledger, id, input.output.kind, ctx.clock.now());
      return json({ id: issued.id, key: issued.key, prefix: issued.prefix, kind: input.output.kind }, 201);
    }),
  );
}
