/**
 * What doctor saw of one HTTP exchange, reduced to plain data so the checks stay pure. Redirects are
 * followed by hand, to tell the caller where the chain went.
 */
export type Observation =
  | {
      ok: true;
      method: string;
      url: string;
      /** Where the redirects ended (url when none). */
      finalUrl: string;
      /** Every Location followed, in order. */
      redirects: string[];
      status: number;
      contentType: string;
      wwwAuthenticate: string | null;
      location: string | null;
      body: string;
      /** The body parsed as JSON, when it is JSON. */
      json: unknown;
    }
  | { ok: false; method: string; url: string; error: string };

export type Answered = Extract<Observation, { ok: true }>;

const MAX_BODY = 256 * 1024;
const MAX_REDIRECTS = 5;

interface ProbeOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  follow?: boolean;
  timeoutMs?: number;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(cause.code))
    return `${cause.code}: the gateway's certificate is not trusted here (add its CA with NODE_EXTRA_CA_CERTS)`;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ""}`;
  if ((error as Error).name === "TimeoutError") return "no answer in time";
  return (error as Error).message ?? String(error);
}

export async function probe(url: string, options: ProbeOptions = {}): Promise<Observation> {
  const method = options.method ?? "GET";
  const redirects: string[] = [];
  let current = url;
  try {
    for (;;) {
      const response = await fetch(current, {
        method: redirects.length === 0 ? method : "GET",
        headers: options.headers,
        body: redirects.length === 0 ? options.body : undefined,
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs ?? 8_000),
      });
      const location = response.headers.get("location");
      if (options.follow && location && response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        if (redirects.length >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
        current = new URL(location, current).href;
        redirects.push(current);
        continue;
      }
      const body = (await response.text()).slice(0, MAX_BODY);
      return {
        ok: true,
        method,
        url,
        finalUrl: current,
        redirects,
        status: response.status,
        contentType: response.headers.get("content-type") ?? "",
        wwwAuthenticate: response.headers.get("www-authenticate"),
        location,
        body,
        json: parseJson(body),
      };
    }
  } catch (error) {
    return { ok: false, method, url: current, error: reason(error) };
  }
}

/** A JSON object body, or undefined. */
export function jsonObject(observation: Observation): Record<string, unknown> | undefined {
  if (!observation.ok) return undefined;
  const value = observation.json;
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** HTML where JSON was expected: what makes AI clients fail with "Unrecognized token '<'". */
export function looksLikeHtml(observation: Answered): boolean {
  return /html/i.test(observation.contentType) || observation.body.trimStart().startsWith("<");
}

/** "200 application/json", "302 to https://...", "ECONNREFUSED": a short account for details. */
export function describeAnswer(observation: Observation): string {
  if (!observation.ok) return `no answer (${observation.error})`;
  const type = observation.contentType.split(";")[0] || "no content type";
  const via = observation.redirects.length > 0 ? ` after redirect to ${observation.finalUrl}` : "";
  return `${observation.status} ${type}${via}`;
}
