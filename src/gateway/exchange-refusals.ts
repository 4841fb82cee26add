import type { FastifyBaseLogger } from "fastify";
import { LogBudget, LogThrottle } from "../auth/log-limits.ts";
import type { TokenParty } from "../auth/mcp-access.ts";
import type { TokenExchangeRefusedError } from "../auth/token-exchange.ts";

/**
 * Refused token exchanges at warn: what an AI client shows as "Server returned 401 after
 * re-authentication" has its cause here (client, user, issuer, the identity provider's error and
 * description; never a token). One line per client, user and reason per minute, with the count of
 * the refusals left out since the previous one; at most 20 such lines a minute in all, so that a
 * refusal every user meets (a misconfigured exchange client) does not flood the log.
 */
export function exchangeRefusalLog(options: { intervalMs?: number; maxPerInterval?: number } = {}) {
  const intervalMs = options.intervalMs ?? 60_000;
  const throttle = new LogThrottle({ intervalMs });
  const max = options.maxPerInterval ?? 20;
  const budget = new LogBudget({ intervalMs, max });
  return (
    log: FastifyBaseLogger,
    party: TokenParty & { subject: string },
    refusal: TokenExchangeRefusedError,
  ) => {
    const error = refusal.error ?? "unexpected_answer";
    const description = refusal.description ?? (refusal.error ? "" : refusal.message);
    const admitted = throttle.admit(
      JSON.stringify([party.client, party.issuer, party.subject, error, description]),
    );
    if (!admitted) return;
    const inBudget = budget.admit();
    if (!inBudget) return;
    const user = party.username ? `${party.username} (sub ${party.subject})` : `sub ${party.subject}`;
    const answer = [refusal.status, error, description && `"${description}"`].filter(Boolean).join(" ");
    const more = [
      admitted.suppressed > 0 &&
        `${admitted.suppressed} more like it were not logged since the previous line`,
      inBudget.suppressed > 0 &&
        `${inBudget.suppressed} other refusals were not logged (at most ${max} lines a minute)`,
    ]
      .filter(Boolean)
      .map((note) => `; ${note}`)
      .join("");
    log.warn(
      {
        event: "token_exchange_refused",
        client: party.client,
        user: party.username,
        sub: party.subject,
        issuer: party.issuer,
        status: refusal.status,
        error,
        error_description: description,
        suppressed: admitted.suppressed,
        suppressed_others: inBudget.suppressed,
      },
      `token exchange refused by the identity provider for client ${party.client ?? "(unknown)"}, user ${user}, issuer ${party.issuer ?? "(unknown)"}: ${answer}; the client got 401 (imaging doctor's token-exchange check names the fix)${more}`,
    );
  };
}
