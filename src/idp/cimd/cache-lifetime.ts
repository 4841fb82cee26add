export interface CacheBounds {
  /** Seconds; default 300. */
  min: number;
  /** Seconds; default 86400 (one day). */
  max: number;
}

export const DEFAULT_CACHE_BOUNDS: CacheBounds = { min: 300, max: 86_400 };

type Headers = Record<string, string | string[] | undefined>;

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
};

/**
 * How long a fetched document is reused, in seconds: Cache-Control max-age (less Age), else Expires
 * (against the response's Date, else now), clamped to [min, max]; no usable header gives min.
 * no-store and no-cache count as 0, hence min: a document is never fetched for every request.
 */
export function cacheLifetimeSeconds(
  headers: Headers,
  nowMs: number,
  bounds: CacheBounds = DEFAULT_CACHE_BOUNDS,
): number {
  const clamp = (seconds: number) => Math.min(bounds.max, Math.max(bounds.min, seconds));
  const cacheControl = (header(headers, "cache-control") ?? "").toLowerCase();
  const directives = new Map(
    cacheControl
      .split(",")
      .map((d) => d.trim())
      .filter((d) => d !== "")
      .map((d) => {
        const eq = d.indexOf("=");
        return eq === -1
          ? [d, ""]
          : [
              d.slice(0, eq).trim(),
              d
                .slice(eq + 1)
                .trim()
                .replace(/^"|"$/g, ""),
            ];
      }),
  );
  if (directives.has("no-store") || directives.has("no-cache")) return clamp(0);
  const maxAge = directives.get("max-age");
  if (maxAge !== undefined && /^\d+$/.test(maxAge)) {
    const age = Number.parseInt(header(headers, "age") ?? "0", 10);
    return clamp(Number.parseInt(maxAge, 10) - (Number.isFinite(age) && age > 0 ? age : 0));
  }
  const expires = header(headers, "expires");
  if (expires !== undefined) {
    const at = Date.parse(expires);
    if (Number.isNaN(at)) return clamp(0);
    const date = Date.parse(header(headers, "date") ?? "");
    const base = Number.isNaN(date) ? nowMs : date;
    return clamp(Math.floor((at - base) / 1000));
  }
  return clamp(0);
}
