import type { FastifyReply } from "fastify";
import { CONSOLE_PAGE_HEADERS } from "./assets.ts";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A one-sentence page for what happens before the console runs (sign-in failures, signed out). */
export function messagePage(
  reply: FastifyReply,
  status: number,
  title: string,
  text: string,
  link?: { href: string; text: string },
): FastifyReply {
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - imaging-services</title></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${
    link ? `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : ""
  }</main></body></html>`;
  return reply.code(status).headers(CONSOLE_PAGE_HEADERS).type("text/html; charset=utf-8").send(body);
}
