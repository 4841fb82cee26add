import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

const recorded = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/registry/${path}`, import.meta.url)));

const LOG4J = "/maven2/org/apache/logging/log4j/log4j-core";
const SPRING_CORE = "/maven2/org/springframework/spring-core";

/**
 * An npm registry and a Maven repository on loopback, answering with recorded real responses
 * (test/fixtures/registry/SOURCES.md): the packument of `ms`, log4j-core's maven-metadata.xml and the
 * signatures of two of its releases; spring-core 4.1.9.RELEASE's signature and its jar's last 8 KiB
 * (ranged requests only). `com.example:dated` is served with Last-Modified headers.
 */
export interface FakeRegistry {
  npmUrl: string;
  mavenUrl: string;
  requests: string[];
  /** The next `count` requests of `path` (e.g. `/maven2/.../maven-metadata.xml`) answer 503. */
  failNext(path: string, count: number): void;
  close(): Promise<void>;
}

export async function startFakeRegistry(): Promise<FakeRegistry> {
  const requests: string[] = [];
  const failures = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = request.url ?? "";
    requests.push(path);
    const failing = failures.get(path) ?? 0;
    if (failing > 0) {
      failures.set(path, failing - 1);
      return response.writeHead(503).end("unavailable");
    }
    const send = (body: Buffer, type: string, headers: Record<string, string> = {}) =>
      response.writeHead(200, { "content-type": type, ...headers }).end(body);
    if (path === "/npm/ms") return send(recorded("npm/ms.json"), "application/json");
    if (path === `${LOG4J}/maven-metadata.xml`)
      return send(recorded("maven/log4j-core-maven-metadata.xml"), "text/xml");
    const asc = /^\/maven2\/org\/apache\/logging\/log4j\/log4j-core\/([^/]+)\/log4j-core-\1\.pom\.asc$/.exec(
      path,
    );
    if (asc && (asc[1] === "2.14.1" || asc[1] === "2.17.1")) {
      return send(recorded(`maven/log4j-core-${asc[1]}.pom.asc`), "text/plain");
    }
    if (path === "/maven2/commons-lang/commons-lang/maven-metadata.xml") {
      return send(
        Buffer.from(
          "<metadata><groupId>commons-lang</groupId><artifactId>commons-lang</artifactId><versioning>" +
            "<versions><version>2.4</version></versions></versioning></metadata>",
        ),
        "text/xml",
      );
    }
    if (path === "/maven2/commons-lang/commons-lang/2.4/commons-lang-2.4.pom.asc") {
      return send(recorded("maven/commons-lang-2.4.pom.asc"), "text/plain");
    }
    if (path === `${SPRING_CORE}/maven-metadata.xml`) {
      return send(
        Buffer.from(
          "<metadata><groupId>org.springframework</groupId><artifactId>spring-core</artifactId><versioning>" +
            "<versions><version>4.1.9.RELEASE</version></versions></versioning></metadata>",
        ),
        "text/xml",
      );
    }
    if (path === `${SPRING_CORE}/4.1.9.RELEASE/spring-core-4.1.9.RELEASE.pom.asc`) {
      return send(recorded("maven/spring-core-4.1.9.RELEASE.pom.asc"), "text/plain");
    }
    if (path === `${SPRING_CORE}/4.1.9.RELEASE/spring-core-4.1.9.RELEASE.jar`) {
      // only the jar's last bytes were recorded: only the ranged request the scanner makes is answered
      const tail = recorded("maven/spring-core-4.1.9.RELEASE.jar.tail");
      if (request.headers.range !== `bytes=-${tail.length}`) return response.writeHead(416).end();
      const size = 1009602;
      return response
        .writeHead(206, {
          "content-type": "application/octet-stream",
          "content-range": `bytes ${size - tail.length}-${size - 1}/${size}`,
        })
        .end(tail);
    }
    if (path === "/maven2/com/example/dated/maven-metadata.xml") {
      return send(
        Buffer.from(
          "<metadata><groupId>com.example</groupId><artifactId>dated</artifactId><versioning><versions>" +
            "<version>1.0</version><version>1.1-SNAPSHOT</version></versions></versioning></metadata>",
        ),
        "text/xml",
      );
    }
    if (path === "/maven2/com/example/dated/1.0/dated-1.0.pom.asc") {
      return send(recorded("maven/log4j-core-2.14.1.pom.asc"), "text/plain", {
        "last-modified": "Tue, 02 Jan 2024 03:04:05 GMT",
      });
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    npmUrl: `${base}/npm`,
    mavenUrl: `${base}/maven2`,
    requests,
    failNext: (path, count) => failures.set(path, count),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
