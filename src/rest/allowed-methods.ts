import type { FastifyInstance } from "fastify";

/**
 * The methods each route path answers (HEAD with GET, as Fastify serves it), for 405 Method Not
 * Allowed with `Allow` instead of 404 when the path exists. Call before the routes are added.
 */
export function allowedMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook("onRoute", (route) => {
    const pattern = new RegExp(
      `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+")}/?$`,
    );
    routes.push({ pattern, methods: [route.method].flat() });
  });
  return (path) => {
    const methods = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
    return ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].filter((m) => methods.has(m));
  };
}
