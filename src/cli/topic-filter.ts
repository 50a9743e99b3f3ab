// Kafka's IncludeList (org.apache.kafka.server.util.TopicFilter): how `--topic` / `--include` patterns of
// the tools become a regular expression — trimmed, commas meaning "or", spaces dropped, quotes at either
// end dropped (property files may bring them), the whole topic name to match.

export function includeList(pattern: string): RegExp {
  const re = pattern
    .trim()
    .replaceAll(",", "|")
    .replaceAll(" ", "")
    .replace(/^["']+/, "")
    .replace(/["']+$/, "");
  try {
    return new RegExp(`^(?:${re})$`);
  } catch {
    // Not a UsageError: the tools print it behind their error prefix, as Kafka's print the exception.
    throw new Error(`${re} is an invalid regex.`);
  }
}
