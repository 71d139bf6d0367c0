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
    bytes += name.length + value.length + 4;
  });
  return bytes > HTTP_LIMITS.maxHeadBytes;
}

export function headTooLarge(envelope: Envelope): ApiError {
  const message = `The request's URL and headers exceed ${HTTP_LIMITS.maxHeadBytes} bytes.`;
  // Handoff clients branch on that envelope's fixed codes: there it is invalid_request, as a 413 body is.
  return envelope === "handoff"
    ? new ApiError("invalid_request", message, { envelope, status: 431 })
    : new ApiError("request_header_too_large", message, { envelope, status: 431 });
}
