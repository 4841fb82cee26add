import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CookieJar, follow, formsOf, type HtmlForm, postForm } from "../support/browserless-session.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { type ClientSetup, startAuthorization } from "../support/oauth-flow.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

describe("embedded identity provider: sign-in and consent pages", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let idp: IdpService;
  let setup: ClientSetup;

  before(async () => {
    store = await createTestStore("sqlite");
    documents = await startCimdDocumentServer();
    idp = await startIdpService(store, {
      // Small limits so the throttling rules show in a few attempts.
      idp: {
        cimdCa: documents.ca,
        throttle: {
          account: { freeAttempts: 3, baseLockMs: 30_000, maxLockMs: 60_000, windowMs: 60_000 },
          address: { freeAttempts: 8, baseLockMs: 30_000, maxLockMs: 60_000, windowMs: 60_000 },
        },
      },
      seed: async (handle) => {
        await seedUsers(handle.db);
        await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
      },
    });
    setup = {
      issuer: idp.issuer,
      clientId: documents.clientId,
      redirectUri: "http://127.0.0.1:49152/callback",
      resource: idp.mcp,
    };
  });
  after(async () => {
    await idp?.stop();
    await documents?.close();
    await store?.drop();
  });

  const loginPage = async () => {
    const started = await startAuthorization(setup);
    assert.equal(started.status, 200, started.html);
    const [form] = formsOf(started.html, started.pageUrl);
    assert.ok(form?.action.endsWith("/login"), started.html);
    return { ...started, form: form as HtmlForm };
  };

  describe("the sign-in page", () => {
    it("is a self-contained, labelled form the keyboard and scripts can target", async () => {
      const started = await startAuthorization(setup);
      const response = await started.jar.fetch(started.pageUrl);
      const html = await response.text();
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
      assert.match(response.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      assert.equal(response.headers.get("x-frame-options"), "DENY");
      assert.equal(response.headers.get("cache-control"), "no-store");
      assert.match(html, /<html lang="en">/);
      assert.match(html, /<label for="username">/);
      assert.match(html, /<input type="text" id="username" name="username" autocomplete="username"/);
      assert.match(html, /<label for="password">/);
      assert.match(html, /<input type="password" id="password" name="password"/);
      assert.match(html, /<button type="submit" id="sign-in"/);
      assert.match(html, /autofocus/);
      assert.match(html, /Test AI Client/, "the page names the client");
      assert.doesNotMatch(html, /<script|<link|src="http|url\(/, "no script and no external asset");
    });

    it("answers a wrong password with a clear message tied to the fields", async () => {
      const { jar, form } = await loginPage();
      const response = await postForm(jar, form, { username: "alice", password: "not-the-password" });
      assert.equal(response.status, 401);
      const html = await response.text();
      assert.match(html, /role="alert">Incorrect user name or password/);
      assert.match(html, /aria-describedby="sign-in-error"/);
      assert.match(html, /value="alice"/, "the user name is kept");
    });

    it("asks for both fields", async () => {
      const { jar, form } = await loginPage();
      const response = await postForm(jar, form, { username: "", password: "" });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /Enter your user name and your password/);
    });
  });

  describe("CSRF protection", () => {
    it("refuses a post without the form's token", async () => {
      const { jar, form } = await loginPage();
      const response = await postForm(jar, { ...form, fields: {} }, USERS_ALICE);
      assert.equal(response.status, 403);
      assert.match(await response.text(), /security token is missing or does not match/);
    });

    it("refuses a token from another browser (another CSRF cookie)", async () => {
      const mine = await loginPage();
      const theirs = await loginPage();
      const response = await postForm(mine.jar, { ...mine.form, fields: theirs.form.fields }, USERS_ALICE);
      assert.equal(response.status, 403);
    });

    it("refuses a post from another origin, even with the right token", async () => {
      const { jar, form } = await loginPage();
      const foreign = await postForm(jar, form, USERS_ALICE, { origin: "https://evil.example" });
      assert.equal(foreign.status, 403);
      assert.match(await foreign.text(), /posted from https:\/\/evil\.example/);
      const crossSite = await postForm(jar, form, USERS_ALICE, { "sec-fetch-site": "cross-site" });
      assert.equal(crossSite.status, 403);
      // The genuine post still goes through.
      const ok = await postForm(jar, form, USERS_ALICE);
      assert.equal(ok.status, 303);
    });

    it("refuses a consent post without the token", async () => {
      const { jar, form } = await loginPage();
      const signedIn = await postForm(jar, form, USERS_ALICE);
      const { response, url } = await follow(
        jar,
        new URL(signedIn.headers.get("location") as string, form.action).href,
        setup.redirectUri,
      );
      const [approve] = formsOf(await response.text(), url);
      assert.ok(approve?.action.endsWith("/confirm"));
      const forged = await postForm(jar, { action: (approve as HtmlForm).action, fields: {} }, {});
      assert.equal(forged.status, 403);
    });
  });

  describe("consent", () => {
    it("shows the client's name, its document URL, the redirect host and the access asked; Deny returns access_denied", async () => {
      const { jar, form } = await loginPage();
      const signedIn = await postForm(jar, form, USERS_ALICE);
      const { response, url } = await follow(
        jar,
        new URL(signedIn.headers.get("location") as string, form.action).href,
        setup.redirectUri,
      );
      const html = await response.text();
      assert.match(html, /Allow Test AI Client to act for you\?/);
      assert.ok(html.includes(documents.clientId), "the client_id URL is shown");
      assert.match(html, /<code>127\.0\.0\.1:49152<\/code>/, "the redirect host is shown");
      assert.match(html, /signed in as <strong>alice<\/strong>/);
      assert.match(html, /\(mcp:tools\)/);
      assert.match(html, /<button type="submit" id="approve"/);
      const deny = formsOf(html, url).find((f) => f.action.endsWith("/abort"));
      assert.ok(deny);
      const denied = await postForm(jar, deny, {});
      const back = await follow(
        jar,
        new URL(denied.headers.get("location") as string, deny.action).href,
        setup.redirectUri,
      );
      assert.ok(back.callback);
      assert.equal(back.callback.searchParams.get("error"), "access_denied");
      assert.equal(back.callback.searchParams.get("iss"), idp.issuer);
    });
  });

  describe("authorization requests refused", () => {
    const authorizeUrl = (params: Record<string, string>) =>
      `${idp.issuer}/auth?${new URLSearchParams({
        client_id: documents.clientId,
        redirect_uri: setup.redirectUri,
        response_type: "code",
        scope: "mcp:tools",
        resource: idp.mcp,
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        ...params,
      })}`;

    it("a client_id no policy trusts: an error page naming the rule, no redirect", async () => {
      const response = await fetch(authorizeUrl({ client_id: "https://unknown.example/oauth/client.json" }), {
        redirect: "manual",
      });
      assert.equal(response.status, 400);
      const html = await response.text();
      assert.match(html, /No client policy matches client_id/);
      assert.match(html, /rule policy-match/);
      assert.match(html, /invalid_client/);
    });

    it("a redirect_uri the document does not list: an error page, never a redirect to it", async () => {
      const response = await fetch(authorizeUrl({ redirect_uri: "http://127.0.0.1:49152/elsewhere" }), {
        redirect: "manual",
      });
      assert.equal(response.status, 400);
      assert.equal(response.headers.get("location"), null);
      assert.match(await response.text(), /redirect-uri-mismatch/);
    });

    it("a loopback redirect_uri on any port is accepted (RFC 8252)", async () => {
      const response = await fetch(authorizeUrl({ redirect_uri: "http://localhost:61234/callback" }), {
        redirect: "manual",
      });
      assert.equal(response.status, 303);
      assert.match(response.headers.get("location") ?? "", /\/interaction\//);
    });

    it("a document whose client_id differs from its URL: an error page naming the rule", async () => {
      const other = documents.serve("/oauth/impostor.json", () => ({
        ...documents.document,
        client_id: documents.clientId,
      }));
      const response = await fetch(authorizeUrl({ client_id: other }), { redirect: "manual" });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /document-client-id/);
    });

    it("PKCE is required: without code_challenge the client gets invalid_request", async () => {
      const url = new URL(authorizeUrl({}));
      url.searchParams.delete("code_challenge");
      url.searchParams.delete("code_challenge_method");
      const response = await fetch(url, { redirect: "manual" });
      const location = new URL(response.headers.get("location") as string);
      assert.equal(location.searchParams.get("error"), "invalid_request");
      assert.match(location.searchParams.get("error_description") ?? "", /PKCE/);
    });

    it("only S256: the plain method is refused", async () => {
      const response = await fetch(authorizeUrl({ code_challenge_method: "plain" }), { redirect: "manual" });
      const location = new URL(response.headers.get("location") as string);
      assert.equal(location.searchParams.get("error"), "invalid_request");
    });

    it("an unknown resource is refused with invalid_target", async () => {
      const response = await fetch(authorizeUrl({ resource: "https://elsewhere.example/api" }), {
        redirect: "manual",
      });
      const location = new URL(response.headers.get("location") as string);
      assert.equal(location.searchParams.get("error"), "invalid_target");
    });
  });

  describe("failed sign-ins are throttled", () => {
    it("per account: after the free attempts the account is locked for a while, even with the right password (429)", async () => {
      const { jar, form } = await loginPage();
      for (let i = 0; i < 3; i++) {
        const response = await postForm(jar, form, { username: "bob", password: `wrong-${i}-password` });
        assert.equal(response.status, 401);
      }
      const locked = await postForm(jar, form, { username: "bob", password: USERS.bob.password });
      assert.equal(locked.status, 429);
      const retryAfter = Number(locked.headers.get("retry-after"));
      assert.ok(retryAfter > 0 && retryAfter <= 30, `Retry-After ${retryAfter}`);
      assert.match(
        await locked.text(),
        /Too many failed sign-in attempts for this account\. Wait \d+ seconds/,
      );
      // Another account from the same address is not affected.
      const other = await loginPage();
      const alice = await postForm(other.jar, other.form, USERS_ALICE);
      assert.equal(alice.status, 303);
    });

    it("per address: many failures over any accounts lock the address out", async () => {
      const { jar, form } = await loginPage();
      // Failures so far from this address come from the tests above; the limit is 8 in all.
      let failures = 0;
      for (; failures < 8; failures++) {
        const response = await postForm(jar, form, {
          username: `nobody-${failures}`,
          password: "whatever-password",
        });
        if (response.status === 429) break;
        assert.equal(response.status, 401);
      }
      assert.ok(failures < 8, "the address was locked out before 8 more failures");
      const refused = await postForm(jar, form, USERS_ALICE);
      assert.equal(refused.status, 429);
      assert.match(await refused.text(), /from your network address/);
    });
  });

  it("an expired or foreign interaction shows a page saying to start again", async () => {
    const jar = new CookieJar();
    const response = await jar.fetch(`${idp.issuer}/interaction/not-a-real-interaction`);
    assert.equal(response.status, 400);
    assert.match(await response.text(), /start signing in again/);
  });
});

const USERS_ALICE = { username: "alice", password: USERS.alice.password };
