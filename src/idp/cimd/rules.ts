import { printable } from "../../domain/printable-text.ts";

/**
 * Every refusal names its rule: a stable id (for tests, logs and the console) and a sentence for the
 * error_description.
 */
export type CimdRule =
  | "client-id-url"
  | "policy-match"
  | "policy-disabled"
  | "policy-uri-scheme"
  | "policy-not-linked"
  | "policy-unknown-profile"
  | "client-id-scheme"
  | "client-id-userinfo"
  | "client-id-query"
  | "client-id-fragment"
  | "client-id-path"
  | "client-id-dot-segment"
  | "profile-trusted-domain"
  | "fetch-special-address"
  | "fetch-redirect"
  | "fetch-status"
  | "fetch-content-type"
  | "fetch-size"
  | "fetch-timeout"
  | "fetch-tls"
  | "fetch-network"
  | "document-json"
  | "document-client-id"
  | "document-redirect-uris"
  | "document-client-secret"
  | "document-auth-method"
  | "document-auth-method-unsupported"
  | "document-uri"
  | "confidential-only"
  | "redirect-uri-url"
  | "redirect-uri-scheme"
  | "redirect-uri-fragment"
  | "redirect-uri-domain"
  | "redirect-uri-same-domain"
  | "redirect-uri-mismatch";

export interface RuleViolation {
  rule: CimdRule;
  description: string;
}

/** The description quotes the client's URLs: kept one printable line (it becomes an error_description). */
export const violation = (rule: CimdRule, description: string): RuleViolation => ({
  rule,
  description: printable(description),
});
