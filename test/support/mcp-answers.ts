/**
 * The application names of a `tools/call` of `applications` as read off the wire: a JSON answer, or the
 * JSON-RPC message of an event stream. Sorted.
 */
export function applicationNamesInAnswer(text: string): string[] {
  const json = text.trimStart().startsWith("{")
    ? text
    : (text
        .split("\n")
        .find((line) => line.startsWith("data:") && line.includes('"result"'))
        ?.slice(5) ?? "{}");
  const message = JSON.parse(json) as {
    result?: { structuredContent?: { applications?: { name: string }[] } };
  };
  return (message.result?.structuredContent?.applications ?? []).map((a) => a.name).sort();
}
