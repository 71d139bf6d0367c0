/**
 * PostgreSQL log positions (LSNs), written `X/Y` in hex: compared and stepped as 64-bit numbers.
 */

export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split("/");
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

export function formatLsn(value: bigint): string {
  return `${(value >> 32n).toString(16).toUpperCase()}/${(value & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function compareLsn(a: string, b: string): number {
  const d = lsnValue(a) - lsnValue(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

export function laterLsn(a: string, b: string): string {
  return compareLsn(a, b) >= 0 ? a : b;
}
