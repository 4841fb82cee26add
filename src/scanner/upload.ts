/**
 * `imaging scan --server URL`: sends the analysis document to the platform
 * (`POST {URL}/rest/applications/{name}/analyses`, admin API key in X-API-KEY), so CI pipelines scan
 * where the code is and the platform stores it. Failures come back as one line; the key never does.
 */

import { type AnalysisUploadSummary, analysisUploadSummary } from "../contracts/analysis-upload.ts";
import type { AnalysisDocument } from "./analysis-document.ts";
import { redactUrl } from "./registry/cached-fetch.ts";

export class UploadError extends Error {
  override name = "UploadError";
}

export async function uploadAnalysis(
  server: string,
  apiKey: string,
  document: AnalysisDocument,
  timeoutMs = 120_000,
): Promise<AnalysisUploadSummary> {
  // A proxy in front of the platform may want basic credentials in the URL: fetch refuses URLs with
  // credentials, so they travel as an Authorization header. Messages name the URL without them.
  const target = new URL(server);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "x-api-key": apiKey,
  };
  if (target.username || target.password) {
    const user = decodeURIComponent(target.username);
    const password = decodeURIComponent(target.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
    target.username = "";
    target.password = "";
  }
  const url = `${target.toString().replace(/\/+$/, "")}/rest/applications/${encodeURIComponent(document.application)}/analyses`;
  const base = redactUrl(server).replace(/\/+$/, "");
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(document),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    // Never the error's own message: it may quote the URL.
    throw new UploadError(`${base} cannot be reached: ${cause?.code ?? (error as Error).name}`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status === 201 || response.status === 200) {
    if (typeof body !== "object" || body === null) {
      throw new UploadError(`${base} accepted the analysis but answered without a JSON summary`);
    }
    // Read with the contract the platform declares its answer with (src/contracts/analysis-upload.ts).
    const summary = analysisUploadSummary.safeParse(body);
    if (!summary.success) {
      const issue = summary.error.issues[0];
      throw new UploadError(
        `${base} recorded the analysis but answered with a summary this imaging does not read ` +
          `(${issue?.path.join(".") || "summary"}: ${issue?.message}): is it another version of imaging?`,
      );
    }
    return summary.data;
  }
  const detail = problemDetail(body);
  const suffix = detail ? `: ${detail}` : "";
  switch (response.status) {
    case 401:
      throw new UploadError(
        `${base} refused the API key (401): set IMAGING_API_KEY to a valid, unrevoked key`,
      );
    case 403:
      throw new UploadError(`${base} refused the upload (403): the API key must belong to an admin${suffix}`);
    case 409:
      throw new UploadError(
        `${base} refused the analysis (409)${suffix || ": it is older than the application's latest analysis"}`,
      );
    case 413:
      throw new UploadError(
        `${base} refused the analysis (413): the document (${Buffer.byteLength(JSON.stringify(document))} bytes) is larger than the server accepts (ANALYSIS_UPLOAD_MAX_BYTES)`,
      );
    default:
      throw new UploadError(`${base} answered HTTP ${response.status}${suffix}`);
  }
}

/** problem+json `detail` (else `title`), on one line. */
function problemDetail(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { detail, title } = body as { detail?: unknown; title?: unknown };
  const text = typeof detail === "string" ? detail : typeof title === "string" ? title : undefined;
  return text?.replace(/\s+/g, " ").trim();
}
