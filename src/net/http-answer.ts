import type { ResponseBody } from "./response-body.js";

/**
 * A response as the transport hands it up, as soon as its head is in:
 * the status, the headers (names lower-case, repeats joined with ", ") and
 * the body still arriving in a ResponseBody.
 */
export interface HttpAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: ResponseBody;
}
