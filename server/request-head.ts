/**
 * The request-head limit (docs/api.md, What the HTTP layer refuses): a head whose URL and header
 * fields together exceed `HTTP_LIMITS.maxHeadBytes` answers 431 in the route's envelope, with
 * x-request-id. Counted from the parsed request (URL, then each field as `name: value` and its
 * line end), which is within a few bytes of the head as sent.
 */
import { HTTP_LIMITS } from "../db/contract.ts";
import { ApiError, type Envelope } from "./errors.ts";

export function isHeadTooLarge(req: Request): boolean {
  let bytes = req.url.length;
  if (bytes > HTTP_LIMITS.maxHeadBytes) return true;
  req.headers.forEach((value, name) => {
    bytes += fieldBytes(name, value);
  });
  return bytes > HTTP_LIMITS.maxHeadBytes;
}

/** The same count over `node:http`'s parsed header fields (a repeated field as its values). */
export function isParsedHeadTooLarge(url: string, headers: Record<string, string | string[] | undefined>): boolean {
  let bytes = url.length;
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) bytes += fieldBytes(name, v);
    else if (value !== undefined) bytes += fieldBytes(name, value);
  }
  return bytes > HTTP_LIMITS.maxHeadBytes;
}

/** `name: value` and its line end. */
const fieldBytes = (name: string, value: string) => name.length + value.length + 4;

export function headTooLarge(envelope: Envelope): ApiError {
  const message = `The request's URL and headers exceed ${HTTP_LIMITS.maxHeadBytes} bytes.`;
  // Handoff clients branch on that envelope's fixed codes: there it is invalid_request, as a 413 body is.
  return envelope === "handoff"
    ? new ApiError("invalid_request", message, { envelope, status: 431 })
    : new ApiError("request_header_too_large", message, { envelope, status: 431 });
}
