import type { Problem as ContractProblem } from "../contracts/admin.ts";
import { csrfToken } from "./session.ts";

/**
 * An RFC 9457 problem the REST API (or the gateway in front of it) answered: the contract's Problem, of
 * which the console relies only on title and status (an answer that is not JSON still yields one).
 */
type Problem = Pick<ContractProblem, "title" | "status"> &
  Partial<ContractProblem> & { [member: string]: unknown };

export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly problem: Problem;

  constructor(status: number, problem: Problem) {
    super(problem.detail ?? problem.title);
    this.status = status;
    this.problem = problem;
  }
}

/** The gateway forwards `/console/api/*` to the REST API's `/rest/*` with the session's rights. */
const API_PREFIX = "/console/api";

function urlOf(path: string, query?: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== "") params.set(name, String(value));
  }
  const search = params.toString();
  return `${API_PREFIX}${path}${search ? `?${search}` : ""}`;
}

async function problemOf(response: Response): Promise<Problem> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as Partial<Problem>;
    return { ...body, title: body.title ?? response.statusText, status: body.status ?? response.status };
  } catch {
    return {
      title: response.statusText || "Error",
      status: response.status,
      detail: text.slice(0, 200) || undefined,
    };
  }
}

async function answer<T>(response: Response): Promise<T> {
  if (response.status === 401) {
    // The session ended (signed out elsewhere, expired): sign in again and come back here.
    const here = `${location.pathname}${location.search}`;
    location.assign(`/console/sign-in?return_to=${encodeURIComponent(here)}`);
  }
  if (!response.ok) throw new ApiError(response.status, await problemOf(response));
  if (response.status === 204) return undefined as T;
  const type = response.headers.get("content-type") ?? "";
  return (type.includes("json") ? await response.json() : await response.text()) as T;
}

async function send(method: string, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, method, credentials: "same-origin" });
  } catch {
    throw new ApiError(0, {
      title: "Network error",
      status: 0,
      detail: "The gateway cannot be reached: check your connection",
    });
  }
}

export async function apiGet<T>(
  path: string,
  query?: Record<string, string | number | undefined>,
): Promise<T> {
  return answer<T>(await send("GET", urlOf(path, query), { headers: { accept: "application/json" } }));
}

export async function apiSend<T>(
  method: "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", "x-csrf-token": csrfToken() };
  if (body !== undefined) headers["content-type"] = "application/json";
  return answer<T>(
    await send(method, urlOf(path), {
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
}
