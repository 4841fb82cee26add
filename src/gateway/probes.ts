import type { FastifyBaseLogger, FastifyInstance } from "fastify";

/** One dependency readiness waits for: resolves to undefined when usable, else why not (for the log). */
export type ReadinessCheck = () => Promise<string | undefined> | string | undefined;

export interface ProbeOptions {
  checks: Record<string, ReadinessCheck>;
  log?: FastifyBaseLogger | undefined;
}

/**
 * Liveness and readiness, for load balancers and Kubernetes. `/livez` only says the process answers
 * (restarting it would not mend a store or an upstream, so none is checked); `/readyz` says whether this
 * replica should get traffic: 200 when every check passes, 503 otherwise. The answer names each check
 * with UP or DOWN only: the reasons (host names, driver messages) go to the log, once per change. While
 * the service stops, Fastify answers 503 on open connections and refuses new ones, so a stopping replica
 * leaves the pool before it closes.
 */
export function probeRoutes(app: FastifyInstance, options: ProbeOptions): void {
  const last = new Map<string, string | undefined>();
  app.get("/livez", async (_request, reply) =>
    reply.header("cache-control", "no-store").send({ status: "UP" }),
  );
  app.get("/readyz", async (_request, reply) => {
    const results = await Promise.all(
      Object.entries(options.checks).map(async ([name, check]) => {
        let reason: string | undefined;
        try {
          reason = await check();
        } catch (error) {
          reason = error instanceof Error ? error.message : String(error);
        }
        if (last.get(name) !== reason) {
          if (reason) options.log?.warn({ check: name }, `readiness: ${name} is not ready: ${reason}`);
          else if (last.has(name)) options.log?.info({ check: name }, `readiness: ${name} is ready again`);
          last.set(name, reason);
        }
        return [name, reason ? "DOWN" : "UP"] as const;
      }),
    );
    const ready = results.every(([, state]) => state === "UP");
    return reply
      .code(ready ? 200 : 503)
      .header("cache-control", "no-store")
      .send({ status: ready ? "UP" : "DOWN", checks: Object.fromEntries(results) });
  });
}
