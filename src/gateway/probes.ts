import type { FastifyBaseLogger, FastifyInstance } from "fastify";

/**
 * One dependency readiness waits for: resolves to undefined when usable, else why not, in words that
 * name no host, port or driver message (the answer carries it; the details are logged where they happen).
 */
export type ReadinessCheck = () => Promise<string | undefined> | string | undefined;

export interface ProbeOptions {
  checks: Record<string, ReadinessCheck>;
  log?: FastifyBaseLogger | undefined;
  /** True once the process drains before stopping: not ready, whatever the checks say. */
  draining?: (() => boolean) | undefined;
}

/** The reason `/readyz` gives while the process drains. */
export const DRAINING_REASON = "the process is stopping (SIGTERM): draining, then exiting";

/**
 * Liveness and readiness, for load balancers and Kubernetes. `/livez` only says the process answers
 * (restarting it would not mend a store or an upstream, so none is checked); `/readyz` says whether this
 * replica should get traffic: 200 when every check passes, 503 otherwise, naming each check UP or DOWN
 * and, under `reasons`, why each DOWN one is. From SIGTERM the process drains: `/readyz` answers 503
 * (check `shutdown`) while requests are still served, so the load balancer takes the replica out before
 * it stops listening.
 */
export function probeRoutes(app: FastifyInstance, options: ProbeOptions): void {
  const last = new Map<string, string | undefined>();
  app.get("/livez", async (_request, reply) =>
    reply.header("cache-control", "no-store").send({ status: "UP" }),
  );
  app.get("/readyz", async (_request, reply) => {
    if (options.draining?.()) {
      return reply
        .code(503)
        .header("cache-control", "no-store")
        .send({ status: "DOWN", checks: { shutdown: "DOWN" }, reasons: { shutdown: DRAINING_REASON } });
    }
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
        return [name, reason] as const;
      }),
    );
    const ready = results.every(([, reason]) => !reason);
    const checks = Object.fromEntries(results.map(([name, reason]) => [name, reason ? "DOWN" : "UP"]));
    const reasons = Object.fromEntries(results.filter(([, reason]) => reason));
    return reply
      .code(ready ? 200 : 503)
      .header("cache-control", "no-store")
      .send(ready ? { status: "UP", checks } : { status: "DOWN", checks, reasons });
  });
}
