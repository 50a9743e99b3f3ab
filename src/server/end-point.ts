// EndPoint: a listener (Kafka's EndPoint: listener name, host, port, security protocol), with the parsing
// of `listeners` / `advertised.listeners` (Kafka's CoreUtils.listenerListToEndPoints) and of
// `listener.security.protocol.map`. A bad value is a ConfigException naming the key and what was expected.

import { ConfigException } from "./kafka-config-def.js";

export interface EndPoint {
  /** e.g. "PLAINTEXT" (upper case, as Kafka normalises listener names). */
  readonly listenerName: string;
  /** "" = all interfaces (bind) / the host's name (advertise). */
  readonly host: string;
  /** 0 = an ephemeral port (tests). */
  readonly port: number;
  readonly securityProtocol: string;
}

const LISTENER_RE = /^([^:/]*):\/\/\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)$/;

/** `listener.security.protocol.map`: "NAME:PROTOCOL,…". */
export function parseSecurityProtocolMap(key: string, value: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")) {
    const m = /^([^:]+):([^:]+)$/.exec(entry);
    const protocol = m?.[2].trim().toUpperCase();
    if (!m || !protocol || !["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].includes(protocol)) {
      throw ConfigException.invalid(
        key,
        value,
        "a list of LISTENER_NAME:SECURITY_PROTOCOL with PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
      );
    }
    out.set(m[1].trim().toUpperCase(), protocol);
  }
  return out;
}

/** Parses `NAME://host:port,…` (Kafka's CoreUtils.listenerListToEndPoints) and checks it. */
export function parseListeners(
  key: string,
  value: string,
  protocolMap: ReadonlyMap<string, string>,
): EndPoint[] {
  const endpoints: EndPoint[] = [];
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const entry of entries) {
    const m = LISTENER_RE.exec(entry);
    if (!m) {
      throw ConfigException.invalid(key, value, `listeners of the form NAME://host:port, got '${entry}'`);
    }
    const listenerName = m[1].toUpperCase();
    const port = Number(m[3]);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw ConfigException.invalid(key, value, `a port in [0, 65535] in '${entry}'`);
    }
    const securityProtocol = protocolMap.get(listenerName);
    if (securityProtocol === undefined) {
      throw ConfigException.invalid(
        key,
        value,
        `listener name ${listenerName} to be in listener.security.protocol.map (${[...protocolMap.keys()].join(", ")})`,
      );
    }
    endpoints.push({ listenerName, host: m[2], port, securityProtocol });
  }
  const names = new Set<string>();
  for (const e of endpoints) {
    if (names.has(e.listenerName)) {
      throw ConfigException.invalid(key, value, `each listener name once (${e.listenerName} is repeated)`);
    }
    names.add(e.listenerName);
  }
  return endpoints;
}

export function endpointString(e: EndPoint): string {
  const host = e.host.includes(":") ? `[${e.host}]` : e.host;
  return `${e.listenerName}://${host}:${e.port}`;
}
