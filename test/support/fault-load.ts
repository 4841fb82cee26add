import { Agent, fetch as undiciFetch } from "undici";
import { PIN_HEADER } from "./haproxy.ts";
import { jsonRpcOf, toolsCallBody, toolsCallHeaders } from "./replica-flows.ts";

/**
 * The fault tests' load (issue 36): clients sending mixed traffic through the load balancer, each answer
 * checked, and a writer whose acknowledged writes are checked afterwards on every replica.
 *
 * - `list`: `GET /rest/applications` with an API key (looked up in the store on every request);
 * - `page`: an occurrences page of the demo data (the REST API's heaviest read);
 * - `tool`: an MCP `tools/call` with a signed-in user's token (verified and exchanged once, then cached);
 * - `write`: `POST /rest/admin/api-keys`, one at a time: each 201 is an acknowledged write.
 *
 * A failure is `clean` when the service said so as specified: 503 with Retry-After (REST: problem+json;
 * MCP: a JSON-RPC error, or a tool error reporting the REST API's 503). Anything else (a connection cut,
 * a 5xx of another kind, HAProxy's own error page, no answer within `REQUEST_TIMEOUT_MS`, a wrong answer)
 * is not.
 */
export type LoadKind = "list" | "page" | "tool" | "write";

export interface FaultRecord {
  kind: LoadKind;
  start: number;
  end: number;
  ok: boolean;
  /** For a failure: the service answered 503 with Retry-After, as it should when the store is down. */
  clean?: boolean;
  reason?: string;
  /** For an acknowledged write: the API key it created. */
  created?: string;
}

export interface LoadTargets {
  /** HAProxy's address. */
  base: string;
  /** An admin API key (REST reads and writes). */
  apiKey: string;
  /** A signed-in user's MCP access token. */
  token: string;
  /** The demo applications, as listed. */
  applications: string[];
  /** The occurrences page's path and its expected JSON. */
  page: { path: string; expected: unknown };
}

/** A request that gets no answer in this long is a failure: the service must answer in bounded time. */
export const REQUEST_TIMEOUT_MS = 20_000;

const KINDS: readonly LoadKind[] = ["list", "page", "tool"];

export async function runFaultLoad(options: {
  targets: LoadTargets;
  clients: number;
  /** The load runs at least this long, and 3 s past the end of `during`. */
  seconds: number;
  during?: (startedAt: number) => Promise<void>;
}): Promise<{ records: FaultRecord[]; duringError?: unknown }> {
  const dispatcher = new Agent({ connections: options.clients + 1, pipelining: 1 });
  const records: FaultRecord[] = [];
  const startedAt = Date.now();
  let until = startedAt + options.seconds * 1000;
  // The clients run until the fault is over and 3 s more, however long it takes, not only `seconds`.
  let faultOver = options.during === undefined;
  const running = () => !faultOver || Date.now() < until;
  let sequence = 0;
  const client = async (index: number) => {
    for (let turn = index; running(); turn++) {
      const kind = KINDS[turn % KINDS.length] as LoadKind;
      records.push(await timed(kind, () => request(kind, options.targets, dispatcher, ++sequence)));
    }
  };
  const writer = async () => {
    while (running()) {
      records.push(await timed("write", () => request("write", options.targets, dispatcher, ++sequence)));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  let duringError: unknown;
  const beside = options.during?.(startedAt).then(
    () => {
      until = Math.max(until, Date.now() + 3_000);
      faultOver = true;
    },
    (error) => {
      duringError = error;
      faultOver = true;
    },
  );
  await Promise.all([...Array.from({ length: options.clients }, (_, i) => client(i)), writer(), beside]);
  await dispatcher.close();
  return { records, duringError };
}

async function timed(
  kind: LoadKind,
  run: () => Promise<Omit<FaultRecord, "kind" | "start" | "end">>,
): Promise<FaultRecord> {
  const start = Date.now();
  const outcome = await run();
  return { kind, start, end: Date.now(), ...outcome };
}

type Outcome = Omit<FaultRecord, "kind" | "start" | "end">;

async function request(
  kind: LoadKind,
  targets: LoadTargets,
  dispatcher: Agent,
  id: number,
): Promise<Outcome> {
  const rest = { "x-api-key": targets.apiKey, accept: "application/json" };
  const init =
    kind === "tool"
      ? {
          url: `${targets.base}/mcp`,
          method: "POST",
          headers: toolsCallHeaders(targets.token),
          body: toolsCallBody(id),
        }
      : kind === "write"
        ? {
            url: `${targets.base}/rest/admin/api-keys`,
            method: "POST",
            headers: { ...rest, "content-type": "application/json" },
            body: JSON.stringify({ user: `fault-writer-${id}`, role: "viewer" }),
          }
        : {
            url: `${targets.base}${kind === "list" ? "/rest/applications?limit=50" : targets.page.path}`,
            method: "GET",
            headers: rest,
          };
  let response: Awaited<ReturnType<typeof undiciFetch>>;
  let text: string;
  try {
    response = await undiciFetch(init.url, {
      method: init.method,
      headers: init.headers,
      ...(init.body ? { body: init.body } : {}),
      dispatcher,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    text = await response.text();
  } catch (error) {
    const cause = (error as Error).cause as { code?: string } | undefined;
    return {
      ok: false,
      clean: false,
      reason: `${(error as Error).message}${cause?.code ? ` (${cause.code})` : ""}`,
    };
  }
  const status = response.status;
  const type = response.headers.get("content-type") ?? "";
  const retryAfter = response.headers.get("retry-after");
  const failed = (clean: boolean, why: string): Outcome => ({
    ok: false,
    clean,
    reason: `HTTP ${status}: ${why.slice(0, 240)}`,
  });
  if (kind === "tool") {
    if (status === 503) {
      const clean = retryAfter !== null && /"error":\{"code":-32\d{3}/.test(text);
      return failed(clean, text);
    }
    if (status !== 200) return failed(false, text);
    let message: {
      result?: { isError?: boolean; content?: { text?: string }[]; structuredContent?: unknown };
      error?: unknown;
    };
    try {
      message = jsonRpcOf(type, text) as typeof message;
    } catch {
      return failed(false, text);
    }
    if (message.result?.isError) {
      const said = message.result.content?.[0]?.text ?? "";
      return failed(/answered 503 .*retry in \d+ s/.test(said), said);
    }
    const names = (
      message.result?.structuredContent as { applications?: { name: string }[] } | undefined
    )?.applications
      ?.map((a) => a.name)
      .sort();
    if (JSON.stringify(names) !== JSON.stringify(targets.applications))
      return failed(false, `wrong answer ${text}`);
    return { ok: true };
  }
  if (status === 503) {
    return failed(retryAfter !== null && type.startsWith("application/problem+json"), text);
  }
  if (kind === "write") {
    if (status !== 201) return failed(false, text);
    return { ok: true, created: (JSON.parse(text) as { id: string }).id };
  }
  if (status !== 200) return failed(false, text);
  const body = JSON.parse(text) as unknown;
  if (kind === "list") {
    const names = (body as { name: string }[]).map((a) => a.name).sort();
    return JSON.stringify(names) === JSON.stringify(targets.applications)
      ? { ok: true }
      : failed(false, `wrong answer ${text}`);
  }
  return JSON.stringify(body) === JSON.stringify(targets.page.expected)
    ? { ok: true }
    : failed(false, `wrong answer ${text}`);
}

/** The API key ids each replica lists (pinned to it by the test header), to find every acknowledged write. */
export async function listedKeys(base: string, apiKey: string, replica: string): Promise<Set<string>> {
  const response = await fetch(`${base}/rest/admin/api-keys`, {
    headers: { "x-api-key": apiKey, [PIN_HEADER]: replica },
  });
  if (response.status !== 200)
    throw new Error(`replica ${replica} listed API keys with HTTP ${response.status}`);
  return new Set(((await response.json()) as { id: string }[]).map((key) => key.id));
}

/** A one-line summary of a run, by kind: requests, failures (clean ones). */
export function summary(records: readonly FaultRecord[]): string {
  return (["list", "page", "tool", "write"] as const)
    .map((kind) => {
      const of = records.filter((r) => r.kind === kind);
      const failed = of.filter((r) => !r.ok);
      return `${kind} ${of.length} (${failed.length} failed, ${failed.filter((r) => r.clean).length} with 503 + Retry-After)`;
    })
    .join(", ");
}
