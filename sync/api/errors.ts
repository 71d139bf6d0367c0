/**
 * How a pass of a replica of another deployment ends early (docs/upstream-records.md, A replica
 * of another deployment): the upstream refused (401, 402, 403, 400, a wrong URL), or the pass was
 * cut short (an error that retrying did not clear, the row budget's reserve, a signal). Either
 * way the pass removes nothing.
 */

export type CutShortReason = "error" | "budget" | "signal";

export class PassCutShort extends Error {
  constructor(
    readonly reason: CutShortReason,
    message: string,
  ) {
    super(message);
  }
}

/** A refusal retrying cannot change: the upstream's status, code and message, in one line. */
export class UpstreamRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    upstreamMessage: string,
  ) {
    super(`the upstream refused: ${status} ${code}: ${upstreamMessage}`);
  }
}

/** 403 `lookahead_not_in_plan`: a date reached past the account's horizon (sync/api/windows.ts decides). */
export class LookaheadRefusal extends Error {}
