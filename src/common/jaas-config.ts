// JaasConfig: the `sasl.jaas.config` value Kafka takes (a client's, and a broker's
// `listener.name.<l>.<mechanism>.sasl.jaas.config`; shared by the broker and the clients):
//   org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="s" user_alice="a";
// one login module, its control flag, and key=value options (values quoted or bare), ending in ';'. Parsed
// into the module name and the options; a malformed value is one line saying what was expected.

export interface JaasLoginModule {
  readonly loginModule: string;
  readonly controlFlag: string;
  readonly options: ReadonlyMap<string, string>;
}

export class JaasConfigError extends Error {
  override readonly name = "JaasConfigError";
}

const FLAGS = new Set(["required", "requisite", "sufficient", "optional"]);

export function parseJaasConfig(text: string): JaasLoginModule {
  let i = 0;
  const s = text.trim();
  const fail = (what: string): never => {
    throw new JaasConfigError(`expected ${what} at character ${i + 1} of the JAAS configuration`);
  };
  const skip = (): void => {
    while (i < s.length && /\s/.test(s[i])) i++;
  };
  const word = (): string => {
    skip();
    const m = /^[A-Za-z0-9_$.-]+/.exec(s.slice(i));
    if (!m) return fail("a name");
    i += m[0].length;
    return m[0];
  };
  const loginModule = word();
  const controlFlag = word().toLowerCase();
  if (!FLAGS.has(controlFlag)) fail("a control flag (required, requisite, sufficient or optional)");
  const options = new Map<string, string>();
  for (;;) {
    skip();
    if (s[i] === ";") break;
    if (i >= s.length) fail("';' at the end");
    const key = word();
    skip();
    if (s[i] !== "=") fail(`'=' after ${key}`);
    i++;
    skip();
    let value: string;
    if (s[i] === '"') {
      const end = s.indexOf('"', i + 1);
      if (end < 0) fail(`a closing quote for the value of ${key}`);
      value = s.slice(i + 1, end);
      i = end + 1;
    } else value = word();
    options.set(key, value);
  }
  i++;
  skip();
  if (i < s.length) fail("nothing after ';' (one login module)");
  return { loginModule, controlFlag, options };
}
