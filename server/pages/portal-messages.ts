/**
 * The developer portal's short pages: signing in, a link that no longer works, signing out, the
 * revocation's confirmation step and the refusals (docs/api.md, "Developer portal").
 */
import { PORTAL } from "../../db/contract.ts";
import type { OwnerKey } from "../portal/owner-keys.ts";
import { html } from "./html.ts";
import { messagePage, renderPage } from "./layout.ts";
import { csrfField, formatUtc } from "./portal-page.ts";

const LINK_MINUTES = PORTAL.signInLinkTtlMs / 60_000;
const backToKeys = html`<p><a href="/developers/keys">Go to your API keys</a></p>`;

/** No session (401): how an owner gets in. */
export function renderSignInNeeded(): string {
  return messagePage(
    "Sign in to manage your API keys",
    `You manage your API keys here after signing in with a one-time link. Get a link from your account on the site that gave you API access: it works once, within ${LINK_MINUTES} minutes.`,
  );
}

/** A sign-in link that is used, expired or unknown (410). */
export function renderSignInLinkGone(): string {
  return messagePage(
    "This sign-in link can no longer be used",
    `Sign-in links work once, within ${LINK_MINUTES} minutes of being made. Get a new link from your account on the site that gave you API access.`,
  );
}

export function renderSignedOut(): string {
  return messagePage(
    "You are signed out",
    "To manage your API keys again, get a new sign-in link from your account on the site that gave you API access.",
  );
}

/** A state-changing request without this session's token or from another site (403). Nothing changed. */
export function renderRequestRefused(): string {
  return messagePage(
    "This request could not be verified",
    "It did not come from this site's own page, or the page was out of date. Nothing was changed. Open your keys page and try again.",
    backToKeys,
  );
}

export function renderKeyNotFound(): string {
  return messagePage("Key not found", "This account has no key with that ID.", backToKeys);
}

/** The confirmation step before a revocation: nothing changes until the owner confirms. */
export function renderRevokeConfirmation(key: OwnerKey, csrfToken: string): string {
  return renderPage({
    title: `Revoke key ${key.id}`,
    noindex: true,
    main: html`<h1>Revoke key ${key.id}?</h1>
<dl class="facts">
<dt>Prefix</dt><dd><code>${key.prefix}…</code></dd>
<dt>Label</dt><dd>${key.label ?? "(none)"}</dd>
<dt>Kind</dt><dd>${key.kind}</dd>
<dt>Created</dt><dd><time datetime="${key.createdAt}">${formatUtc(key.createdAt)}</time></dd>
</dl>
<p class="notice notice-error">Requests with this key are refused from the moment you revoke it, everywhere it is used. This cannot be undone: you would create a new key instead.</p>
<form class="actions" method="post" action="/developers/keys/${key.id}/revoke">
${csrfField(csrfToken)}
<input type="hidden" name="confirm" value="yes">
<button class="button button-danger" type="submit">Revoke key ${key.id}</button>
<a href="/developers/keys">Cancel</a>
</form>`,
  });
}
