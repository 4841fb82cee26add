import { STATUS_CODES } from "node:http";
import type { FastifyReply } from "fastify";

/** RFC 9457 problem details: every REST error has this shape and a sentence a person can act on. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  /** Validation refusals of the administration endpoints: the rule broken and the input field at fault. */
  rule?: string;
  field?: string;
}

export function problem(status: number, detail: string, instance?: string): Problem {
  return {
    type: "about:blank",
    title: STATUS_CODES[status] ?? "Error",
    status,
    detail,
    ...(instance ? { instance } : {}),
  };
}

export function sendProblem(
  reply: FastifyReply,
  status: number,
  detail: string,
  extra?: Pick<Problem, "rule" | "field">,
): FastifyReply {
  const body = { ...problem(status, detail, reply.request.url.split("?")[0]), ...extra };
  return reply.code(status).type("application/problem+json").send(JSON.stringify(body));
}

export const problemSchema = {
  $id: "Problem",
  type: "object",
  description: "RFC 9457 problem details",
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    instance: { type: "string" },
    rule: { type: "string", description: "The validation rule the input breaks (administration endpoints)" },
    field: { type: "string", description: "The input field at fault (administration endpoints)" },
  },
  required: ["type", "title", "status", "detail"],
} as const;
