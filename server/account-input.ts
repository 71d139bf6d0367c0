/**
 * Account fields as the operator gives them (CLI flags and `/_test/accounts` bodies),
 * validated once here for both.
 */
import * as v from "valibot";
import type { AccountFields } from "../db/accounts.ts";
import { PLANS, POLICY_STATES } from "../db/contract.ts";

const count = v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0)));

export const AccountInput = v.strictObject({
  email: v.optional(v.pipe(v.string(), v.trim(), v.email())),
  plan: v.optional(v.picklist(PLANS)),
  verified: v.optional(v.boolean()),
  hadSubscription: v.optional(v.boolean()),
  rowBudget: v.optional(count),
  rateSustained: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1)))),
  rateBurst: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1)))),
  policy: v.optional(v.picklist(POLICY_STATES)),
  /** Active keys the owner may hold; 0 lets the owner create none. */
  keyLimit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});

export type AccountInput = v.InferOutput<typeof AccountInput>;

/** Returns the parsed fields or a one-line message naming the first bad field. */
export function parseAccountInput(
  input: unknown,
): { ok: true; fields: Partial<AccountFields> } | { ok: false; message: string } {
  const r = v.safeParse(AccountInput, input);
  if (!r.success) {
    const issue = r.issues[0];
    const path = issue.path?.map((p) => p.key).join(".");
    return { ok: false, message: path ? `${path}: ${issue.message}` : issue.message };
  }
  const f = r.output;
  if (
    (f.rateSustained == null) !== (f.rateBurst == null) &&
    (f.rateSustained !== undefined || f.rateBurst !== undefined)
  ) {
    return { ok: false, message: "rateSustained and rateBurst are given together" };
  }
  return { ok: true, fields: f };
}
