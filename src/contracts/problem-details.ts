import { STATUS_CODES } from "node:http";
import type { Problem } from "./admin.ts";

/**
 * A problem's body, built one way for the REST API's errors and the gateway's own answers on its paths,
 * so clients meet one error format. Apart from admin.ts because it needs node:http, which the console
 * (a browser bundle that imports admin.ts) does not have.
 */
export function problemDetails(status: number, detail: string, instance?: string): Problem {
  return {
    type: "about:blank",
    title: STATUS_CODES[status] ?? "Error",
    status,
    detail,
    ...(instance ? { instance } : {}),
  };
}
