import { parse } from "node-html-parser";
import { CookieJar as ToughCookieJar } from "tough-cookie";

/**
 * A browser's part in the sign-in pages without a browser: cookies kept by tough-cookie (RFC 6265: paths,
 * expiry, deletions), post forms read with an HTML parser, redirects followed by hand so a test sees each
 * hop. Headless Chromium (console-browser.ts) is for what needs a page's scripts.
 */
export class CookieJar {
  readonly #cookies = new ToughCookieJar();

  /** The value of a cookie the jar holds for any path of any site it visited. */
  get(name: string): string | undefined {
    const all = this.#cookies.serializeSync()?.cookies ?? [];
    return all.find((c) => c.key === name)?.value as string | undefined;
  }

  /** fetch without following redirects, with this jar's cookies. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = await this.#cookies.getCookieString(url);
    if (cookie) headers.set("cookie", cookie);
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      await this.#cookies.setCookie(line, url, { ignoreError: true });
    }
    return response;
  }
}

export interface HtmlForm {
  action: string;
  fields: Record<string, string>;
}

/** The post forms of a page, with their hidden fields. */
export function formsOf(html: string, pageUrl: string): HtmlForm[] {
  return parse(html)
    .querySelectorAll("form")
    .filter((form) => form.getAttribute("method")?.toLowerCase() === "post")
    .map((form) => ({
      action: new URL(form.getAttribute("action") ?? "", pageUrl).href,
      fields: Object.fromEntries(
        form
          .querySelectorAll('input[type="hidden"]')
          .map((input) => [input.getAttribute("name") ?? "", input.getAttribute("value") ?? ""]),
      ),
    }));
}

export async function postForm(
  jar: CookieJar,
  form: HtmlForm,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return jar.fetch(form.action, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(form.action).origin,
      ...headers,
    },
    body: new URLSearchParams({ ...form.fields, ...fields }).toString(),
  });
}

/** Follows redirects inside the provider; stops at a page, or at the redirect to the client. */
export async function follow(
  jar: CookieJar,
  start: string,
  redirectUri: string,
): Promise<{ url: string; response: Response; callback?: URL }> {
  let url = start;
  for (let hops = 0; hops < 10; hops++) {
    const response = await jar.fetch(url);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (
        `${next.origin}${next.pathname}` === `${new URL(redirectUri).origin}${new URL(redirectUri).pathname}`
      ) {
        return { url, response, callback: next };
      }
      await response.body?.cancel();
      url = next.href;
      continue;
    }
    return { url, response };
  }
  throw new Error(`too many redirects from ${start}`);
}
