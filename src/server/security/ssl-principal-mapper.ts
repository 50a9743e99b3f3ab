// SslPrincipalMapper: Kafka's `ssl.principal.mapping.rules` — how a client certificate's subject DN
// (RFC 2253, "CN=alice,OU=Clients,O=Example") becomes a user name. A comma-separated list of rules tried
// in order: `DEFAULT` (the DN itself) or `RULE:<pattern>/<replacement>/[LU]` where the Java regular
// expression must match the whole DN, the replacement may use $1…, and L / U lower- / upper-case the
// result. A DN no rule matches has no principal (Kafka fails the connection: "No rules apply to …").

export class SslPrincipalMapperError extends Error {
  override readonly name = "SslPrincipalMapperError";
}

interface Rule {
  readonly isDefault: boolean;
  readonly pattern?: RegExp;
  readonly replacement?: string;
  readonly toLowerCase?: boolean;
  readonly toUpperCase?: boolean;
}

// One rule and its separator, as Kafka's RULE_SPLITTER: DEFAULT | RULE:pattern/replacement/[LU] | other.
const RULE_SPLITTER =
  /\s*((DEFAULT)|RULE:((?:\\.|[^\\/])*)\/((?:\\.|[^\\/])*)\/([LU]?)[^,]*?|([^,]*?))\s*(?:,\s*|$)/y;

export class SslPrincipalMapper {
  private constructor(
    private readonly rules: readonly Rule[],
    private readonly text: string,
  ) {}

  /** Parses the setting's value; a malformed rule is an SslPrincipalMapperError naming it. */
  static fromRules(text: string | null | undefined): SslPrincipalMapper {
    const value = (text ?? "DEFAULT").trim() === "" ? "DEFAULT" : (text ?? "DEFAULT").trim();
    const rules: Rule[] = [];
    RULE_SPLITTER.lastIndex = 0;
    while (RULE_SPLITTER.lastIndex < value.length) {
      const start = RULE_SPLITTER.lastIndex;
      const m = RULE_SPLITTER.exec(value);
      if (m === null || RULE_SPLITTER.lastIndex === start) break;
      if (m[2] !== undefined) rules.push({ isDefault: true });
      else if (m[3] !== undefined) {
        let pattern: RegExp;
        try {
          pattern = new RegExp(`^(?:${m[3]})$`);
        } catch (e) {
          throw new SslPrincipalMapperError(`Invalid rule: ${m[1]}: ${(e as Error).message}`);
        }
        rules.push({
          isDefault: false,
          pattern,
          replacement: m[4],
          toLowerCase: m[5] === "L",
          toUpperCase: m[5] === "U",
        });
      } else if (m[6] !== undefined && m[6] !== "")
        throw new SslPrincipalMapperError(`Invalid rule: ${m[6]}`);
    }
    if (rules.length === 0) throw new SslPrincipalMapperError(`Invalid rule: ${value}`);
    return new SslPrincipalMapper(rules, value);
  }

  /** The user name for a DN; throws SslPrincipalMapperError when no rule applies. */
  getName(distinguishedName: string): string {
    for (const r of this.rules) {
      if (r.isDefault) return distinguishedName;
      const p = r.pattern as RegExp;
      if (!p.test(distinguishedName)) continue;
      let result = distinguishedName.replace(p, javaReplacement(r.replacement as string));
      if (r.toLowerCase) result = result.toLowerCase();
      else if (r.toUpperCase) result = result.toUpperCase();
      return result;
    }
    throw new SslPrincipalMapperError(`No rules apply to ${distinguishedName}, rules ${this.text}`);
  }
}

/** Java's replacement syntax ($1, \$ for a literal $) in JavaScript's ($1, $$). */
function javaReplacement(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\" && i + 1 < s.length) {
      const next = s[++i];
      out += next === "$" ? "$$" : next;
    } else out += c;
  }
  return out;
}

/**
 * A certificate subject as Node gives it (X509Certificate.subject: one "KEY=value" per line, most general
 * first) in RFC 2253 form as Java's X500Principal.getName(): most specific first, comma-separated, with
 * , + " \ < > ; escaped.
 */
export function rfc2253(subject: string): string {
  return subject
    .split("\n")
    .filter((l) => l !== "")
    .reverse()
    .map((l) => {
      const eq = l.indexOf("=");
      const key = l.slice(0, eq);
      const value = l.slice(eq + 1).replace(/([,+"\\<>;])/g, "\\$1");
      return `${key}=${value}`;
    })
    .join(",");
}
