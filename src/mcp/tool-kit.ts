/**
 * What every tool of both MCP servers shares: how a tool is declared, how its REST errors become
 * tool errors, paging, and the small text renderings (short summaries and Markdown tables).
 */
import type { CallToolResult, McpServer, ServerContext } from "@modelcontextprotocol/server";
import * as z from "zod";
import { UNKNOWN_VULNERABILITY_TYPE } from "../contracts/platform.ts";
import { packageFacts, type ReleaseDate, releaseDate } from "../contracts/resources.ts";
import { mcpToolCalls, mcpToolDuration } from "../observability/metrics.ts";
import { createRestClient, RestApiError, type RestClient, type RestTransport } from "./rest-client.ts";

export interface ToolOutput<O> {
  structured: O;
  text: string;
}

export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  run(args: z.output<I>, rest: RestClient): Promise<ToolOutput<z.output<O>>>;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of tools of different shapes
export type AnyToolSpec = ToolSpec<any, any>;

export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(spec: ToolSpec<I, O>): AnyToolSpec =>
  spec;

export interface ToolEnvironment {
  /** How the tools reach the platform REST API (over HTTP, or in-process). */
  transport: RestTransport;
  /** Per REST call. Default 30 s. */
  restTimeoutMs?: number;
}

/** Structured outputs that have just passed their tool's output schema (in the tool handler below). */
const checkedOutputs = new WeakMap<object, z.ZodType>();

/**
 * A tool schema prepared for the SDK, once per process (the schemas are module constants):
 * - its JSON Schema conversion (the Standard JSON Schema `~standard.jsonSchema` the SDK calls) is done
 *   once instead of once per server: a server is built per 2026 request and per 2025 session, and the SDK
 *   converts the called tool's schemas on each new server (tools/call checks the input schema for
 *   `x-mcp-header` declarations and projects the result with the output schema);
 * - a structured output the tool handler has just parsed with this very schema is not validated a second
 *   time by the SDK (any other value is).
 */
const prepared = new WeakSet<object>();
export function prepareSchema<S extends z.ZodType>(schema: S): S {
  if (prepared.has(schema)) return schema;
  const standard = schema["~standard"];
  const convert = standard.jsonSchema;
  const once = (io: "input" | "output") => {
    const byTarget = new Map<string, Record<string, unknown>>();
    return (params: Parameters<typeof convert.input>[0]) => {
      // Options other than the target change the result: convert those every time.
      if (params?.libraryOptions) return convert[io](params);
      const key = String(params?.target ?? "");
      let json = byTarget.get(key);
      if (!json) {
        json = convert[io](params);
        byTarget.set(key, json);
      }
      return json;
    };
  };
  schema["~standard"] = {
    ...standard,
    validate: (value: unknown) =>
      typeof value === "object" && value !== null && checkedOutputs.get(value) === schema
        ? { value: value as z.output<S> }
        : standard.validate(value),
    jsonSchema: { input: once("input"), output: once("output") },
  };
  prepared.add(schema);
  return schema;
}

/** Registers the tools; each call uses the bearer token of the MCP request that carries it. */
export function registerTools(
  server: McpServer,
  env: ToolEnvironment,
  tools: readonly AnyToolSpec[],
  serverKind = "mcp",
): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: prepareSchema(tool.input),
        outputSchema: prepareSchema(tool.output),
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      async (args: unknown, ctx: ServerContext): Promise<CallToolResult> => {
        const rest = createRestClient({
          transport: env.transport,
          token: ctx.http?.authInfo?.token,
          traceparent: ctx.http?.authInfo?.extra?.traceparent,
          signal: ctx.mcpReq.signal,
          ...(env.restTimeoutMs ? { timeoutMs: env.restTimeoutMs } : {}),
        });
        const stopTimer = mcpToolDuration.startTimer({ server: serverKind, tool: tool.name });
        let outcome = "error";
        try {
          const { structured, text } = await tool.run(args as never, rest);
          // Parsing keeps exactly the declared properties: the advertised output schema forbids others,
          // so a property the REST API adds later must not leak into structuredContent.
          const structuredContent = tool.output.parse(structured);
          checkedOutputs.set(structuredContent, tool.output);
          outcome = "ok";
          return { content: [{ type: "text", text }], structuredContent };
        } catch (error) {
          return toolError(error);
        } finally {
          stopTimer();
          mcpToolCalls.inc({ server: serverKind, tool: tool.name, outcome });
        }
      },
    );
  }
}

export function toolError(error: unknown): CallToolResult {
  const text =
    error instanceof RestApiError && error.type === UNKNOWN_VULNERABILITY_TYPE
      ? // An answer, not a failure of the tool: said as the platform says it, so that an agent never reads
        // "not known" as "not affected".
        error.detail
      : error instanceof RestApiError || error instanceof ToolInputError
        ? error.message
        : `The tool failed: ${(error as Error)?.message ?? String(error)}`;
  return { isError: true, content: [{ type: "text", text }] };
}

/** A request the tool itself refuses before calling the REST API. */
export class ToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolInputError";
  }
}

// ---------------------------------------------------------------------------------------------
// Input fields shared by the tools

export const MAX_PAGE = 500;

export const applicationInput = z
  .string()
  .min(1)
  .max(256)
  .describe("Application name exactly as listed by the `applications` tool, e.g. payments-service");

export const dateInput = (what = "answer") =>
  z
    .string()
    .min(1)
    .optional()
    .describe(
      `ISO 8601 date-time such as 2024-03-01T00:00:00Z (no offset means UTC): ${what} as of the latest ` +
        "analysis at or before this instant. Omit for the latest analysis.",
    );

export const pagingInput = (what: string, defaultLimit: number) => ({
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE)
    .default(defaultLimit)
    .describe(`Maximum number of ${what} to return, 1 to ${MAX_PAGE} (default ${defaultLimit})`),
  skip: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(`Number of ${what} to skip first; pass the previous answer's page.nextSkip for the next page`),
});

/** A non-negative integer. */
export const count = () => z.number().int().min(0);

export const pageOutput = z
  .object({
    skip: count(),
    limit: count(),
    returned: count().describe("Number of items in this answer"),
    hasMore: z.boolean().describe("True when more items follow this page"),
    nextSkip: count().nullable().describe("skip value for the next page, null on the last page"),
  })
  .describe("Where this page is in the full list");

export type Page = z.output<typeof pageOutput>;

/** Reads one page, asking the REST API for one item more to know whether another page follows. */
export async function readPage<T>(
  paging: { limit: number; skip: number },
  read: (paging: { limit: number; skip: number }) => Promise<T[]>,
): Promise<{ items: T[]; page: Page }> {
  const rows = await read({ limit: paging.limit + 1, skip: paging.skip });
  const items = rows.slice(0, paging.limit);
  const hasMore = rows.length > paging.limit;
  return {
    items,
    page: {
      skip: paging.skip,
      limit: paging.limit,
      returned: items.length,
      hasMore,
      nextSkip: hasMore ? paging.skip + items.length : null,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Output pieces shared by the tools

// The REST resources' shapes (src/contracts) are the tools' output pieces: a field added there reaches
// the tools' output schemas.
export { SEVERITIES } from "../contracts/platform.ts";
export {
  applicationObject as applicationObjectOutput,
  externalObject as externalObjectOutput,
} from "../contracts/resources.ts";

/** The REST package facts with the release date as a plain ISO string, as the tools give dates. */
export const packageFactsOutput = {
  ...packageFacts,
  releaseDate: z.string().nullable().describe("Release date of the version in use (null if unknown)"),
  releaseDateSource: releaseDate.shape.source,
};

/** The REST API's release date as the tools write it: the instant and, beside it, where it comes from. */
export const releaseDateFields = (value: ReleaseDate | null) => ({
  releaseDate: value?.dateTime ?? null,
  releaseDateSource: value?.source ?? null,
});

/** `{dateTime}` of the REST API, or null, as a plain ISO string. */
export const instant = (value: { dateTime: string } | null | undefined): string | null =>
  value?.dateTime ?? null;
