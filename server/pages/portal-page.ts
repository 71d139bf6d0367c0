/**
 * The developer portal's keys page (docs/api.md, "Developer portal"): the account's plan,
 * trial or row budget, its keys, a form to create one and a link to revoke each. Plain forms
 * carry the session's CSRF token; there is no script. On a narrow screen the keys table reads
 * as one block per key (server/pages/styles.ts).
 *
 * A newly created key is in the page answering its creation and in no other response: the
 * ledger keeps only its digest.
 */
import { PORTAL } from "../../db/contract.ts";
import type { CreatedKey, OwnerKey, PortalAccount } from "../portal/owner-keys.ts";
import { html, type SafeHtml } from "./html.ts";
import { renderPage } from "./layout.ts";

export interface KeysPageView {
  account: PortalAccount;
  keys: OwnerKey[];
  csrfToken: string;
  /** The key this response created: its only appearance. */
  created?: CreatedKey;
  /** A refusal or a confirmation to show above the page's content. */
  notice?: { kind: "error" | "done"; text: string };
  /** The label the owner typed, kept when creation was refused. */
  label?: string;
}

const PLAN_NAMES: Record<string, string> = {
  none: "No plan",
  basic: "Basic",
  business: "Business",
  enterprise: "Enterprise",
  legacy: "Legacy",
};

const number = (n: number) => n.toLocaleString("en-US");

/** `2030-03-01 12:00 UTC`: keys are an account's, not a venue's, so times are shown in UTC. */
export function formatUtc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const when = (iso: string) => html`<time datetime="${iso}">${formatUtc(iso)}</time>`;

export const csrfField = (token: string) => html`<input type="hidden" name="csrf_token" value="${token}">`;

function planLine(a: PortalAccount): SafeHtml {
  const name = PLAN_NAMES[a.plan] ?? a.plan;
  const served =
    a.tier && a.tier !== a.plan ? html` <span class="muted">(served as ${PLAN_NAMES[a.tier] ?? a.tier})</span>` : "";
  const unprovisioned = a.provisioned
    ? ""
    : html`<br><span class="muted">Not yet set up for API access: requests answer 403 until the operator finishes it.</span>`;
  return html`${name}${served}${unprovisioned}`;
}

function trialLine(a: PortalAccount): SafeHtml | null {
  const t = a.trial;
  if (!t) return a.plan === "none" ? html`None: subscribe to a plan to use your keys` : null;
  const rows = html`${number(t.rowsUsed)} of ${number(t.rowLimit)} rows used`;
  switch (t.state) {
    case "not_started":
      return html`Not started: it starts with your first request and lasts 7 days or ${number(t.rowLimit)} rows`;
    case "active":
      return html`Active: ${t.daysLeft} ${t.daysLeft === 1 ? "day" : "days"} left (until ${when(t.expiresAt!)}), ${rows}`;
    case "expired":
      return html`Ended on ${when(t.expiresAt!)}, ${rows}: subscribe to a plan to continue`;
    case "exhausted":
      return html`Ended: ${rows}; subscribe to a plan to continue`;
  }
}

function accountFacts(a: PortalAccount): SafeHtml {
  const trial = trialLine(a);
  const budget = a.rowBudget;
  return html`<dl class="facts" id="account">
<dt>Account</dt><dd>${a.email}</dd>
<dt>Plan</dt><dd id="plan">${planLine(a)}</dd>
${trial ? html`<dt>Trial</dt><dd id="trial">${trial}</dd>\n` : ""}${
  budget
    ? html`<dt>Row budget</dt><dd id="row-budget">${number(budget.used)} of ${number(budget.limit)} rows used in the last ${budget.windowHours} hours</dd>\n`
    : a.tier
      ? html`<dt>Row budget</dt><dd id="row-budget">No row budget</dd>\n`
      : ""
}<dt>Keys</dt><dd id="key-ceilings">${a.activeKeys} of ${a.keyLimit} active keys; ${a.keysCreatedThisHour} of ${a.issuancePerHour} new keys in the last hour</dd>
</dl>`;
}

function createdPanel(k: CreatedKey): SafeHtml {
  return html`<section class="notice secret-panel" aria-labelledby="new-key-heading">
<h2 id="new-key-heading">Your new key</h2>
<p><strong>Copy it now.</strong> This is the only time it is shown: only a digest of it is kept, so nobody can show it again.</p>
<p><code class="secret" id="new-key">${k.key}</code></p>
<p class="muted">Click the key once to select all of it, then copy it (Ctrl+C, or ⌘C on a Mac). Send it as <code>Authorization: Bearer &lt;key&gt;</code>.</p>
</section>`;
}

function keyRow(k: OwnerKey): SafeHtml {
  const status = k.status === "active" ? html`Active` : html`Revoked ${when(k.revokedAt!)}`;
  const action =
    k.status === "active"
      ? html`<a class="button button-danger button-small" href="/developers/keys/${k.id}/revoke" aria-label="Revoke key ${k.id} (${k.prefix}…)">Revoke…</a>`
      : html`<span class="muted">—</span>`;
  return html`<tr id="key-${k.id}">
<td data-label="ID">${k.id}</td>
<td data-label="Label">${k.label ?? html`<span class="muted">(none)</span>`}</td>
<td data-label="Prefix"><code>${k.prefix}…</code></td>
<td data-label="Kind">${k.kind}</td>
<td data-label="Created">${when(k.createdAt)}</td>
<td data-label="Status">${status}</td>
<td data-label="Action">${action}</td>
</tr>`;
}

function keysTable(keys: OwnerKey[]): SafeHtml {
  if (keys.length === 0) return html`<p id="no-keys">This account has no keys yet.</p>`;
  return html`<table class="keys" id="keys">
<caption class="visually-hidden">Keys of this account, oldest first</caption>
<thead><tr><th scope="col">ID</th><th scope="col">Label</th><th scope="col">Prefix</th><th scope="col">Kind</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col">Action</th></tr></thead>
<tbody>
${keys.map(keyRow)}
</tbody>
</table>`;
}

function createForm(v: KeysPageView): SafeHtml {
  const a = v.account;
  return html`<section aria-labelledby="create-heading">
<h2 id="create-heading">Create a key</h2>
<form method="post" action="/developers/keys" class="stack">
${csrfField(v.csrfToken)}
<label for="label">Label <span class="muted">(optional, up to ${PORTAL.maxLabelLength} characters, e.g. where the key is used)</span></label>
<input id="label" name="label" type="text" maxlength="${PORTAL.maxLabelLength}" autocomplete="off" value="${v.label ?? ""}">
<p><button class="button" type="submit">Create a ${a.keyKind} key</button></p>
</form>
<p class="muted">Keys created here are <code>${a.keyKind}</code> keys${a.keyKind === "builder" ? " (accounts without a paid plan get builder keys)" : ""}. An account holds at most ${a.keyLimit} active keys, and at most ${a.issuancePerHour} keys can be created in any hour.</p>
</section>`;
}

export function renderKeysPage(v: KeysPageView): string {
  const notice = v.notice
    ? html`<div class="notice${v.notice.kind === "error" ? " notice-error" : ""}" id="notice" role="${v.notice.kind === "error" ? "alert" : "status"}"><p>${v.notice.text}</p></div>\n`
    : "";
  return renderPage({
    title: "API keys",
    noindex: true,
    main: html`<div class="title-row">
<h1>API keys</h1>
<form method="post" action="/developers/sign-out">${csrfField(v.csrfToken)}<button class="button button-secondary button-small" type="submit">Sign out</button></form>
</div>
${notice}${v.created ? createdPanel(v.created) : ""}
${accountFacts(v.account)}
<section aria-labelledby="keys-heading">
<h2 id="keys-heading">Your keys</h2>
${keysTable(v.keys)}
<p class="muted">A key's full value is shown only once, when it is created. The prefix tells keys apart.</p>
</section>
${createForm(v)}`,
  });
}
