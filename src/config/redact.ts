/**
 * Secrets never appear in messages: configuration errors end up in tickets, logs and screenshots.
 * URL userinfo is masked wherever a URL appears (`scheme://user:***@host`, or `scheme://***@host`
 * when the userinfo is a single token), as pip and git redact URLs in their output.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#"'<>]*)@/gi;

export function maskUrlUserinfo(text: string): string {
  return text.replace(URL_USERINFO, (_match, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":");
    return `${scheme}${colon >= 0 ? `${userinfo.slice(0, colon)}:***` : "***"}@`;
  });
}

/** What a rejected value was, without the value: for settings holding secrets. */
export function describeWithoutValue(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  const type = typeof value;
  return type === "object" ? "an object" : `a ${type}`;
}
