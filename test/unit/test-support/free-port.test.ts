import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { freePort } from "../../support/service.ts";

describe("freePort (ports for services started side by side by the test runner)", () => {
  it("hands out distinct ports a service can then listen on", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    assert.equal(new Set(ports).size, ports.length, `a port handed out twice: ${ports.join(" ")}`);
    for (const port of ports.slice(0, 5)) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", resolve);
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("picks below the kernel's ephemeral range, where no port-0 listener or outgoing connection lands", async () => {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    const port = await freePort();
    assert.ok(port < (low as number), `port ${port} is in the ephemeral range starting at ${low}`);
  });
});
