import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeTestCertificates, type TestCertificates } from "./test-certificates.ts";

export interface CimdDocumentServer {
  /** The client_id: https URL of the document. */
  clientId: string;
  /** PEM of the test CA that signed the server's certificate. */
  ca: string;
  /** Replaces the document served (defaults to a valid one). */
  document: Record<string, unknown>;
  /** Serves another document at `path` on the same host; returns its URL. */
  serve(path: string, document: (url: string) => unknown): string;
  readonly fetches: number;
  close(): Promise<void>;
}
/** A client metadata document served over HTTPS on 127.0.0.1, its certificate from a throwaway CA (openssl). */
export async function startCimdDocumentServer(
  path = "/oauth/client-metadata.json",
  redirectUris = ["http://127.0.0.1/callback", "http://localhost/callback"],
  /** Certificates of a CA made beforehand (a Keycloak started with it in its truststore); else a new one. */
  given?: TestCertificates,
): Promise<CimdDocumentServer> {
  const dir = mkdtempSync(join(tmpdir(), "imaging-test-ca-"));
  try {
    const certificates = given ?? makeTestCertificates(dir);
    const ca = certificates.ca;
    const state = { fetches: 0, document: {} as Record<string, unknown> };
    const others = new Map<string, unknown>();
    const server: Server = createServer(
      { key: readFileSync(certificates.keyFile), cert: readFileSync(certificates.certFile) },
      (req, res) => {
        if (req.url !== path && !others.has(req.url ?? "")) {
          res.writeHead(404).end();
          return;
        }
        state.fetches++;
        res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=0" });
        res.end(JSON.stringify(req.url === path ? state.document : others.get(req.url ?? "")));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const clientId = `${origin}${path}`;
    state.document = {
      client_id: clientId,
      client_name: "Test AI Client",
      client_uri: "https://127.0.0.1/",
      redirect_uris: redirectUris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
    return {
      clientId,
      ca,
      get document() {
        return state.document;
      },
      set document(value) {
        state.document = value;
      },
      get fetches() {
        return state.fetches;
      },
      serve(other, document) {
        others.set(other, document(`${origin}${other}`));
        return `${origin}${other}`;
      },
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
