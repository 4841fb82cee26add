import { LogThrottle } from "../auth/log-limits.ts";

/** A sign-in or registration refused by a rule: who asked, the rule, and the sentence the client got. */
export interface Refusal {
  kind: "sign-in" | "registration";
  /** The client_id (sign-in) or what names the would-be client (registration: its client_name, address). */
  client: string;
  rule: string;
  description: string;
}

export type RefusalReporter = (refusal: Refusal) => void;

const RULE = /\s*\[rule ([a-z0-9-]+)\]$/;

/** The rule named at the end of a refusal's description (`... [rule client-id-domain]`), if any. */
export function ruleOf(description: string): { rule: string; description: string } {
  const match = RULE.exec(description);
  return match
    ? { rule: match[1] as string, description: description.slice(0, match.index) }
    : { rule: "unknown", description };
}

/**
 * Refusals at info level, so an administrator sees why a client cannot sign in (the client often shows
 * only "Incompatible auth server" or a generic error): one line per client and rule a minute, the next
 * line saying how many were left out, whatever a client retrying in a loop sends.
 */
export function refusalLog(log: (message: string) => void, intervalMs = 60_000): RefusalReporter {
  const throttle = new LogThrottle({ intervalMs });
  return ({ kind, client, rule, description }) => {
    const admitted = throttle.admit(`${kind} ${client} ${rule}`);
    if (!admitted) return;
    const more = admitted.suppressed > 0 ? ` (${admitted.suppressed} more in the last minute)` : "";
    log(`${kind} refused: client ${client}, rule ${rule}: ${description}${more}`);
  };
}
