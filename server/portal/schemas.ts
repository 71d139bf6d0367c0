/**
 * The developer portal's JSON shapes, declared once: the TypeScript types the portal builds, the
 * OpenAPI schemas it publishes (server/openapi-portal.ts) and the request body it validates all
 * come from here. Objects are strict, like the API's own resources (server/schemas.ts).
 */
import * as v from "valibot";
import { KEY_KINDS, PLANS, PORTAL } from "../../db/contract.ts";

const id = v.pipe(v.number(), v.integer(), v.minValue(1));
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const utc = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.description(description));
const label = v.pipe(
  v.nullable(v.pipe(v.string(), v.maxLength(PORTAL.maxLabelLength))),
  v.description("The owner's name for the key, or null."),
);

export const DeveloperKey = v.strictObject({
  id,
  kind: v.picklist(KEY_KINDS),
  label,
  prefix: v.pipe(
    v.string(),
    v.description("Display prefix: the kind and the first random characters. Tells keys apart; never the key."),
  ),
  createdAt: utc("When the key was created."),
  revokedAt: v.pipe(
    v.nullable(v.pipe(v.string(), v.isoTimestamp())),
    v.description("When it was revoked; null while active."),
  ),
  status: v.picklist(["active", "revoked"]),
});
export type DeveloperKey = v.InferOutput<typeof DeveloperKey>;

export const CreatedDeveloperKey = v.strictObject({
  id,
  kind: v.picklist(KEY_KINDS),
  label,
  prefix: v.string(),
  key: v.pipe(v.string(), v.description("The full key. In this response only: it is never shown again.")),
  createdAt: utc("When the key was created."),
});
export type CreatedDeveloperKey = v.InferOutput<typeof CreatedDeveloperKey>;

export const DeveloperTrial = v.strictObject({
  state: v.picklist(["not_started", "active", "expired", "exhausted"]),
  rowsUsed: count,
  rowLimit: count,
  expiresAt: v.pipe(
    v.nullable(v.pipe(v.string(), v.isoTimestamp())),
    v.description("null until the first request starts the trial."),
  ),
  daysLeft: v.pipe(v.nullable(count), v.description("Whole days left, rounded up; null until the trial starts.")),
});

export const DeveloperRowBudget = v.strictObject({
  limit: count,
  used: v.pipe(count, v.description("Rows delivered in the rolling window.")),
  windowHours: count,
});

export const DeveloperAccount = v.strictObject({
  id,
  email: v.string(),
  plan: v.picklist(PLANS),
  tier: v.pipe(v.nullable(v.string()), v.description("The tier requests are served as; null without a plan.")),
  provisioned: v.pipe(
    v.boolean(),
    v.description("False when a paid plan still lacks its access policy (requests answer 403)."),
  ),
  keyKind: v.pipe(
    v.picklist(KEY_KINDS),
    v.description("The kind of key created here: `live` with a paid plan, `builder` otherwise."),
  ),
  keyLimit: v.pipe(count, v.description("Active keys the account may hold.")),
  activeKeys: count,
  keysCreatedThisHour: v.pipe(count, v.description("Keys created here in the last rolling hour.")),
  issuancePerHour: count,
  trial: v.pipe(
    v.nullable(DeveloperTrial),
    v.description("The REST trial of an account without a plan; null otherwise."),
  ),
  rowBudget: v.pipe(
    v.nullable(DeveloperRowBudget),
    v.description("The rolling row budget of a row-metered plan; null otherwise."),
  ),
});
export type DeveloperAccount = v.InferOutput<typeof DeveloperAccount>;

export const DeveloperKeys = v.strictObject({
  account: DeveloperAccount,
  keys: v.array(DeveloperKey),
  csrfToken: v.pipe(v.string(), v.description("Send it as `X-CSRF-Token` on every POST of this session.")),
});

export const RevokedDeveloperKey = v.strictObject({ id, status: v.picklist(["revoked"]) });

/** The body of `POST /developers/keys`; a form's other fields (the CSRF token) are ignored. */
export const CreateDeveloperKeyRequest = v.object({
  label: v.optional(
    v.nullable(
      v.pipe(
        v.string("label must be a string"),
        v.trim(),
        v.maxLength(PORTAL.maxLabelLength, `label must be at most ${PORTAL.maxLabelLength} characters`),
        v.regex(/^[^\x00-\x1f\x7f]*$/, "label must not contain control characters"),
      ),
    ),
  ),
});
