/**
 * The part of make-fetch-happen the scanner uses. @types/make-fetch-happen is three majors behind and
 * pulls the DOM library into every file's global types, so the boundary is typed here instead.
 */
declare module "make-fetch-happen" {
  interface FetchResponse {
    status: number;
    headers: { get(name: string): string | null; entries(): IterableIterator<[string, string]> };
    buffer(): Promise<Buffer>;
  }
  interface FetchOptions {
    cache?: "default" | "no-store" | "reload" | "no-cache" | "force-cache" | "only-if-cached";
    headers?: Record<string, string>;
  }
  interface Defaults extends FetchOptions {
    cachePath?: string;
    maxSockets?: number;
    timeout?: number;
    retry?: { retries?: number; minTimeout?: number; maxTimeout?: number } | number | false;
  }
  type Fetch = (url: string, options?: FetchOptions) => Promise<FetchResponse>;
  const fetch: Fetch & { defaults(options: Defaults): Fetch };
  export default fetch;
}
