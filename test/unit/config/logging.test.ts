import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import Fastify from "fastify";
import { loggerOptions, REDACTED, redactText, redactUrl } from "../../../src/config/logging.ts";

describe("log redaction", () => {
  it("replaces the values of credential query parameters, whatever their case or encoding", () => {
    assert.equal(redactUrl("/mcp?access_token=abc.def"), `/mcp?access_token=${REDACTED}`);
    assert.equal(
      redactUrl("/cb?state=s1&code=c2&iss=http%3A%2F%2Fx&Refresh_Token=r3&access%5Ftoken=a4"),
      `/cb?state=s1&code=${REDACTED}&iss=http%3A%2F%2Fx&Refresh_Token=${REDACTED}&access%5Ftoken=${REDACTED}`,
    );
    assert.equal(redactUrl("/rest/x?limit=5&client_secret"), `/rest/x?limit=5&client_secret=${REDACTED}`);
    assert.equal(redactUrl("/rest/applications?limit=5"), "/rest/applications?limit=5");
    assert.equal(redactUrl("/no/query"), "/no/query");
  });

  it("redacts URLs inside free text", () => {
    assert.equal(
      redactText("fetch http://h/t?code=xyz&x=1 failed"),
      `fetch http://h/t?code=${REDACTED}&x=1 failed`,
    );
  });

  it("a Fastify logger with these options writes neither credential URLs nor credential headers", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = Fastify({ logger: { ...loggerOptions("info"), stream } });
    app.get("/t", async (request) => {
      request.log.info({ headers: request.headers }, "headers as a careless plugin would log them");
      return { ok: true };
    });
    const response = await app.inject({
      url: "/t?access_token=tok-123456&keep=1",
      headers: { authorization: "Bearer tok-abcdef", cookie: "s=cookie-987654", "x-api-key": "imk_key-555" },
    });
    assert.equal(response.statusCode, 200);
    await app.close();
    const log = lines.join("");
    assert.match(log, /"url":"\/t\?access_token=\[REDACTED\]&keep=1"/);
    for (const secret of ["tok-123456", "tok-abcdef", "cookie-987654", "imk_key-555"]) {
      assert.ok(!log.includes(secret), `${secret} in ${log}`);
    }
  });
});
