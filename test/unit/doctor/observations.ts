import type { Answered, Observation } from "../../../src/doctor/http.ts";

/** What doctor's probe would have recorded for an answer: plain data, as the checks receive it. */
export function answered(
  url: string,
  status: number,
  body: unknown,
  options: Partial<Omit<Answered, "ok" | "url" | "status" | "body" | "json">> = {},
): Observation {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    ok: true,
    method: options.method ?? "GET",
    url,
    finalUrl: options.finalUrl ?? url,
    redirects: options.redirects ?? [],
    status,
    contentType:
      options.contentType ?? (typeof body === "string" ? "text/html" : "application/json; charset=utf-8"),
    wwwAuthenticate: options.wwwAuthenticate ?? null,
    location: options.location ?? null,
    body: text,
    json,
  };
}

export function unanswered(url: string, error = "ECONNREFUSED", method = "GET"): Observation {
  return { ok: false, method, url, error };
}
