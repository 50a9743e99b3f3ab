// The host a listener without one (`PLAINTEXT://:9092`, the default `listeners`) advertises. Kafka's rule
// is this machine's host name (InetAddress.getLocalHost's canonical name). A client that is told a name it
// cannot resolve, or that resolves to another machine, fails after bootstrapping, however it reached the
// broker first; so the name is kept only when every address it resolves to is one of this machine's own
// (a loopback address or an interface's) — the listener, bound to all interfaces, answers on each of
// them. Otherwise the broker advertises `localhost`, which the clients on this machine reach (the
// zero-setup case: `npm start`, then a client on localhost:9092), and says why; clients on other machines
// need `advertised.listeners` set then.

import { lookup } from "node:dns/promises";
import { hostname, networkInterfaces } from "node:os";

/** What a listener without a host advertises, and, when not this machine's name, why not. */
export interface DefaultAdvertisedHost {
  readonly host: string;
  /** Set when the host name was not usable: the reason, for a WARN line. */
  readonly fallbackReason?: string;
}

/** The host advertised when a host name is not usable. */
export const FALLBACK_ADVERTISED_HOST = "localhost";

/** Whether `address` (as dns.lookup gives it) belongs to this machine: loopback, or one of its interfaces'. */
function isOwnAddress(address: string, own: ReadonlySet<string>): boolean {
  const a = address.toLowerCase().replace(/^::ffff:(?=\d+\.)/, "");
  if (a === "::1" || a.startsWith("127.")) return true;
  return own.has(a.replace(/%.*$/, ""));
}

/**
 * The host to advertise for listeners without a host: `name` (default: this machine's host name) when it
 * resolves, and only to addresses of this machine; else FALLBACK_ADVERTISED_HOST with the reason.
 */
export async function defaultAdvertisedHost(name: string = hostname()): Promise<DefaultAdvertisedHost> {
  const fallback = (why: string): DefaultAdvertisedHost => ({
    host: FALLBACK_ADVERTISED_HOST,
    fallbackReason: `the host name '${name}' ${why}`,
  });
  if (name === "") return fallback("is empty");
  let addresses: string[];
  try {
    addresses = (await lookup(name, { all: true })).map((a) => a.address);
  } catch (e) {
    return fallback(`does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const own = new Set<string>();
  for (const list of Object.values(networkInterfaces()))
    for (const i of list ?? []) own.add(i.address.toLowerCase().replace(/%.*$/, ""));
  const foreign = addresses.filter((a) => !isOwnAddress(a, own));
  if (addresses.length === 0) return fallback("does not resolve");
  if (foreign.length > 0)
    return fallback(`resolves to ${foreign.join(", ")}, not an address of this machine`);
  return { host: name };
}
