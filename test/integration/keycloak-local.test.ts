import assert from "node:assert/strict";
import { networkInterfaces } from "node:os";
import { after, before, describe, it } from "node:test";
import type { Check } from "../../src/doctor/check.ts";
import { runCli, spawnService } from "../support/cli.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * A loopback trial as a new administrator runs it (issue 17): `imaging start --local` with IDP=keycloak
 * and the port in PORT, then `imaging doctor` with the same flags and environment. `--local` changes
 * only the bind address and the default base_url; doctor derives the same deployment; its internal-bind
 * check tells loopback listeners from exposed ones by trying the machine's non-loopback addresses.
 */
describe("imaging start --local and imaging doctor --local agree (Keycloak)", () => {
  let keycloak: TestKeycloak;
  let store: TestStore;
  let realm: string;
  let env: Record<string, string>;
  const external = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && !a.internal && a.family === "IPv4")
    .map((a) => a?.address as string);

  /** The deployment's environment: what the administrator's shell holds, nothing from the test runner's. */
  const deployment = async (extra: Record<string, string> = {}) => ({
    ...keycloakEnv(keycloak, realm),
    IMAGING_DATA_DIR: store.dataDir,
    PUBLIC_URL: "",
    IMAGING_BIND_ADDRESS: "",
    DATABASE_URL: "",
    IMAGING_CONFIG: "",
    TOKEN_EXCHANGE_CLIENT_SECRET: "",
    PORT: String(await freePort()),
    // Fixed, so that doctor can try them at the machine's other addresses.
    REST_PORT: String(await freePort()),
    MCP_ANALYSIS_PORT: String(await freePort()),
    MCP_GATEKEEPER_PORT: String(await freePort()),
    ...extra,
  });

  const start = async (args: string[], environment: Record<string, string>) => {
    const started = await spawnService(args, environment);
    return {
      ...started,
      stop: async () => {
        started.child.kill("SIGTERM");
        await new Promise((resolve) => started.child.once("exit", resolve));
      },
    };
  };

  const doctor = async (args: string[], environment: Record<string, string>) => {
    const result = await runCli(["doctor", "--json", ...args], environment);
    let checks: Check[] = [];
    try {
      checks = JSON.parse(result.stdout) as Check[];
    } catch {
      assert.fail(`doctor --json printed no JSON (exit ${result.code}): ${result.stdout}${result.stderr}`);
    }
    const check = (id: string) => {
      const found = checks.find((c) => c.id === id);
      assert.ok(found, `check ${id} reported (got ${checks.map((c) => c.id).join(", ")})`);
      return found;
    };
    return { ...result, checks, check };
  };
  const failing = (checks: Check[]) =>
    checks.filter((c) => c.verdict !== "pass" && c.verdict !== "n/a").map((c) => `${c.id}: ${c.detail}`);

  before(async () => {
    keycloak = await useKeycloak();
    store = await createTestStore("sqlite");
    realm = uniqueRealm("local");
    env = await deployment();
  });
  after(async () => {
    await store?.drop();
  });

  it("listens on PORT at loopback, names http://localhost:PORT everywhere, Keycloak's realm included", async () => {
    const port = env.PORT as string;
    const service = await start(["--local"], env);
    try {
      assert.equal(service.summary.baseUrl, `http://localhost:${port}`);
      assert.equal(
        service.summary.gateway,
        `http://127.0.0.1:${port}`,
        "the gateway listens on PORT, loopback",
      );
      const health = await fetch(`http://127.0.0.1:${port}/mcp/healthcheck`);
      assert.equal(health.status, 200);
      for (const address of external)
        await assert.rejects(
          fetch(`http://${address}:${port}/mcp/healthcheck`, { signal: AbortSignal.timeout(2_000) }),
          `the gateway does not answer at ${address}`,
        );
      const discovery = (await (
        await fetch(`http://127.0.0.1:${port}/auth/realms/${realm}/.well-known/openid-configuration`)
      ).json()) as { issuer: string };
      assert.equal(discovery.issuer, `http://localhost:${port}/auth/realms/${realm}`);

      // What provisioning wrote into Keycloak names the same address.
      const admin = await connectTestAdmin(keycloak, realm);
      const found = await admin.realms.findOne({ realm });
      assert.equal(found?.attributes?.frontendUrl, `http://localhost:${port}/auth`);
      const tools = await admin.clientScopes.findOneByName({ name: "mcp:tools" });
      const audiences = (await admin.clientScopes.listProtocolMappers({ id: tools?.id as string })).map(
        (m) => m.config?.["included.custom.audience"],
      );
      assert.ok(audiences.includes(`http://localhost:${port}/mcp`), audiences.join(", "));

      const added = await runCli(["cimd", "add", "claude-code", "--preset", "claude-code", "--http"], env);
      assert.equal(added.code, 0, added.stderr);

      // doctor with the flags start was given: the same deployment, every check passes.
      const local = await doctor(["--local"], env);
      assert.equal(local.code, 0, failing(local.checks).join("\n"));
      assert.deepEqual(failing(local.checks), []);
      const text = await runCli(["doctor", "--local"], env);
      assert.match(
        text.stdout,
        new RegExp(
          `^imaging doctor: base_url http://localhost:${port}, Keycloak, issuer http://localhost:${port}/auth/realms/${realm}$`,
          "m",
        ),
      );

      // Without --local doctor checks another deployment (http://<fqdn>:PORT) and says so, but the
      // listeners are what they are: internal-bind is not fooled by a host name resolving to loopback.
      const other = await doctor([], env);
      assert.equal(other.code, 1);
      const metadata = other.check("resource-metadata-mcp");
      assert.equal(metadata.verdict, "fail");
      assert.match(
        metadata.detail,
        new RegExp(
          `the gateway's base_url is http://localhost:${port}, .*\\(PUBLIC_URL, --local or --port differs\\)`,
        ),
      );
      assert.match(metadata.fix ?? "", /checked with the same flags/);
      const bind = other.check("internal-bind");
      assert.equal(bind.verdict, "pass", bind.detail);
      assert.ok(external.length > 0, "this machine has a non-loopback address to try");
      for (const address of external) assert.match(bind.detail, new RegExp(address.replaceAll(".", "\\.")));
    } finally {
      await service.stop();
    }
  });

  it("--port wins over PORT, and --local keeps it", async () => {
    const port = String(await freePort());
    const service = await start(["--local", "--port", port], env);
    try {
      assert.equal(service.summary.baseUrl, `http://localhost:${port}`);
      assert.equal(service.summary.gateway, `http://127.0.0.1:${port}`);
      const local = await doctor(["--local", "--port", port, "--client", "claude-code"], env);
      assert.equal(local.code, 0, failing(local.checks).join("\n"));
      const config = await runCli(["client-config", "claude-code", "--local", "--port", port, "--json"], env);
      assert.equal((JSON.parse(config.stdout) as { url: string }).url, `http://localhost:${port}/mcp`);
    } finally {
      await service.stop();
    }
  });

  it("internal-bind warns when the internal listeners answer at a non-loopback address", async () => {
    const exposed = await deployment({ INTERNAL_BIND_ADDRESS: "0.0.0.0" });
    const service = await start(["--local"], exposed);
    try {
      const result = await doctor(["--local", "--client", "claude-code"], exposed);
      const bind = result.check("internal-bind");
      assert.equal(bind.verdict, "warn", bind.detail);
      assert.match(bind.detail, /INTERNAL_BIND_ADDRESS=0\.0\.0\.0/);
      assert.ok(external.length > 0, "this machine has a non-loopback address to try");
      for (const address of external)
        for (const url of [
          `http://${address}:${exposed.REST_PORT}/rest/health`,
          `http://${address}:${exposed.MCP_ANALYSIS_PORT}/healthz`,
          `http://${address}:${exposed.MCP_GATEKEEPER_PORT}/healthz`,
        ])
          assert.ok(bind.detail.includes(`${url} answered from here`), `${url} in: ${bind.detail}`);
    } finally {
      await service.stop();
    }
  });
});
