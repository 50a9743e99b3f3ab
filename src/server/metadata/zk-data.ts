// ZkData: the znode paths and JSON documents of ZooKeeper-based Kafka (Kafka's ZkData.scala), shared by
// the controller, the metadata cache and the topic admin. Owns encode/decode of each document so that a
// store written by Tributary reads as Kafka's and the other way round.

import { randomBytes } from "node:crypto";
import { MetadataStoreError } from "./metadata-store.js";

export const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";

export const ZkPaths = {
  clusterId: "/cluster/id",
  controller: "/controller",
  controllerEpoch: "/controller_epoch",
  brokers: "/brokers",
  brokerIds: "/brokers/ids",
  brokerId: (id: number): string => `/brokers/ids/${id}`,
  topics: "/brokers/topics",
  topic: (t: string): string => `/brokers/topics/${t}`,
  partitions: (t: string): string => `/brokers/topics/${t}/partitions`,
  partition: (t: string, p: number): string => `/brokers/topics/${t}/partitions/${p}`,
  partitionState: (t: string, p: number): string => `/brokers/topics/${t}/partitions/${p}/state`,
  config: "/config",
  configTopics: "/config/topics",
  configTopic: (t: string): string => `/config/topics/${t}`,
  configBrokers: "/config/brokers",
  configBroker: (id: string): string => `/config/brokers/${id}`,
  configUsers: "/config/users",
  configClients: "/config/clients",
  /**
   * A user/client config entity (`users/<u>`, `clients/<c>`, `users/<u>/clients/<c>`, names sanitized,
   * `<default>` for the defaults): SCRAM credentials and client quotas, as Kafka stores them.
   */
  configEntity: (entityPath: string): string => `/config/${entityPath}`,
  configChanges: "/config/changes",
  configChangePrefix: "/config/changes/config_change_",
  admin: "/admin",
  deleteTopics: "/admin/delete_topics",
  deleteTopic: (t: string): string => `/admin/delete_topics/${t}`,
  reassignPartitions: "/admin/reassign_partitions",
  isrChangeNotification: "/isr_change_notification",
  logDirEventNotification: "/log_dir_event_notification",
} as const;

/** Persistent paths Kafka creates at startup (KafkaZkClient.createTopLevelPaths). */
export const PERSISTENT_ZK_PATHS: readonly string[] = [
  "/admin/delete_topics",
  "/brokers/ids",
  "/brokers/topics",
  "/config/changes",
  "/config/topics",
  "/config/brokers",
  "/config/clients",
  "/config/users",
  "/config/ips",
  "/isr_change_notification",
  "/latest_producer_id_block",
  "/log_dir_event_notification",
];

/**
 * Kafka's Sanitizer: an entity name (user principal or client id) as it appears in a znode path —
 * URL-encoded as Java's URLEncoder (UTF-8; only letters, digits, `.`, `-`, `_` kept), space as %20 and
 * `*` as %2A, so any name is one path segment. `<default>` (the defaults entity) is written as it is.
 */
export function sanitizeEntityName(name: string): string {
  return encodeURIComponent(name).replace(
    /[!'()*~]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** The entity name a sanitized znode name stands for (Kafka's Sanitizer.desanitize). */
export function desanitizeEntityName(sanitized: string): string {
  try {
    return decodeURIComponent(sanitized.replace(/\+/g, "%20"));
  } catch {
    return sanitized;
  }
}

/** Name of the dynamic default broker config entity (`/config/brokers/<default>`). */
export const DEFAULT_BROKER_ENTITY = "<default>";

function bad(path: string, what: string): MetadataStoreError {
  return new MetadataStoreError("BadArguments", path, `znode ${path}: ${what}`);
}

function parse(path: string, data: Buffer): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(data.toString("utf8"));
  } catch {
    throw bad(path, "not valid JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad(path, "expected a JSON object");
  return v as Record<string, unknown>;
}

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), "utf8");

function intArray(path: string, v: unknown, what: string): number[] {
  if (!Array.isArray(v) || v.some((x) => !Number.isInteger(x)))
    throw bad(path, `${what}: expected an int array`);
  return v as number[];
}

/** A random topic id / cluster id: 16 random bytes as unpadded base64url, never the zero uuid. */
export function randomUuid(): string {
  for (;;) {
    const b = randomBytes(16);
    const s = b.toString("base64url");
    // Kafka also avoids ids starting with '-' (command-line ambiguity) and the zero/sentinel uuids.
    if (s !== ZERO_UUID && s !== "AAAAAAAAAAAAAAAAAAAAAQ" && !s.startsWith("-")) return s;
  }
}

// ---- /cluster/id ----
export const ClusterIdZNode = {
  encode: (id: string): Buffer => json({ version: "1", id }),
  decode(path: string, data: Buffer): string {
    const o = parse(path, data);
    if (typeof o.id !== "string") throw bad(path, "missing id");
    return o.id;
  },
};

// ---- /controller ----
export const ControllerZNode = {
  encode: (brokerId: number, timestampMs: number): Buffer =>
    json({ version: 2, brokerid: brokerId, timestamp: String(timestampMs), kraftControllerEpoch: -1 }),
  decode(path: string, data: Buffer): number {
    const o = parse(path, data);
    if (!Number.isInteger(o.brokerid)) throw bad(path, "missing brokerid");
    return o.brokerid as number;
  },
};

// ---- /controller_epoch ----
export const ControllerEpochZNode = {
  encode: (epoch: number): Buffer => Buffer.from(String(epoch), "utf8"),
  decode(path: string, data: Buffer): number {
    const n = Number(data.toString("utf8").trim());
    if (!Number.isInteger(n)) throw bad(path, "expected an integer");
    return n;
  },
};

// ---- /brokers/ids/<id> ----
export interface BrokerEndPoint {
  readonly listenerName: string;
  readonly securityProtocol: string;
  readonly host: string;
  readonly port: number;
}

export interface BrokerRegistration {
  readonly id: number;
  readonly endpoints: readonly BrokerEndPoint[];
  readonly rack: string | null;
  readonly jmxPort: number;
  readonly timestampMs: number;
  /** Supported features ({name: {min_version, max_version}}); empty for now. */
  readonly features?: Record<string, unknown>;
}

export const BrokerIdZNode = {
  /** Kafka's broker registration, version 5. */
  encode(b: BrokerRegistration): Buffer {
    // Top-level host/port for old clients: the first PLAINTEXT-protocol endpoint (Kafka's BrokerIdZNode).
    const plain = b.endpoints.find((e) => e.securityProtocol === "PLAINTEXT") ?? null;
    const doc: Record<string, unknown> = {
      features: b.features ?? {},
      listener_security_protocol_map: Object.fromEntries(
        b.endpoints.map((e) => [e.listenerName, e.securityProtocol]),
      ),
      endpoints: b.endpoints.map(
        (e) => `${e.listenerName}://${e.host.includes(":") ? `[${e.host}]` : e.host}:${e.port}`,
      ),
    };
    if (b.rack !== null) doc.rack = b.rack;
    doc.jmx_port = b.jmxPort;
    doc.port = plain ? plain.port : -1;
    doc.host = plain ? plain.host : null;
    doc.version = 5;
    doc.timestamp = String(b.timestampMs);
    return json(doc);
  },
  decode(path: string, id: number, data: Buffer): BrokerRegistration {
    const o = parse(path, data);
    const map = (o.listener_security_protocol_map ?? {}) as Record<string, string>;
    const endpoints: BrokerEndPoint[] = [];
    const raw = Array.isArray(o.endpoints) ? (o.endpoints as unknown[]) : [];
    for (const e of raw) {
      const m = typeof e === "string" ? /^([^:]+):\/\/\[?([^\]]*?)\]?:(\d+)$/.exec(e) : null;
      if (!m) throw bad(path, `bad endpoint ${JSON.stringify(e)}`);
      endpoints.push({
        listenerName: m[1],
        securityProtocol: map[m[1]] ?? m[1],
        host: m[2],
        port: Number(m[3]),
      });
    }
    if (endpoints.length === 0 && typeof o.host === "string" && Number.isInteger(o.port)) {
      endpoints.push({
        listenerName: "PLAINTEXT",
        securityProtocol: "PLAINTEXT",
        host: o.host,
        port: o.port as number,
      });
    }
    return {
      id,
      endpoints,
      rack: typeof o.rack === "string" ? o.rack : null,
      jmxPort: Number.isInteger(o.jmx_port) ? (o.jmx_port as number) : -1,
      timestampMs: Number(o.timestamp ?? 0),
      features: (o.features ?? {}) as Record<string, unknown>,
    };
  },
};

// ---- /brokers/topics/<t> ----
export interface TopicAssignment {
  readonly topicId: string;
  /** partition → replicas, in assignment order */
  readonly partitions: ReadonlyMap<number, readonly number[]>;
  readonly addingReplicas: ReadonlyMap<number, readonly number[]>;
  readonly removingReplicas: ReadonlyMap<number, readonly number[]>;
}

function mapToObj(m: ReadonlyMap<number, readonly number[]>): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const p of [...m.keys()].sort((a, b) => a - b)) out[String(p)] = [...m.get(p)!];
  return out;
}

function objToMap(path: string, v: unknown, what: string): Map<number, number[]> {
  const out = new Map<number, number[]>();
  if (v === undefined || v === null) return out;
  if (typeof v !== "object" || Array.isArray(v)) throw bad(path, `${what}: expected an object`);
  for (const [k, reps] of Object.entries(v as Record<string, unknown>)) {
    const p = Number(k);
    if (!Number.isInteger(p) || p < 0) throw bad(path, `${what}: bad partition ${k}`);
    out.set(p, intArray(path, reps, `${what}.${k}`));
  }
  return out;
}

export const TopicZNode = {
  encode(a: TopicAssignment): Buffer {
    return json({
      version: 3,
      topic_id: a.topicId,
      partitions: mapToObj(a.partitions),
      adding_replicas: mapToObj(a.addingReplicas),
      removing_replicas: mapToObj(a.removingReplicas),
    });
  },
  decode(path: string, data: Buffer): TopicAssignment {
    const o = parse(path, data);
    return {
      topicId: typeof o.topic_id === "string" ? o.topic_id : ZERO_UUID,
      partitions: objToMap(path, o.partitions, "partitions"),
      addingReplicas: objToMap(path, o.adding_replicas, "adding_replicas"),
      removingReplicas: objToMap(path, o.removing_replicas, "removing_replicas"),
    };
  },
};

// ---- /admin/reassign_partitions ----
/** A reassignment asked for through ZooKeeper: topic-partition → target replicas. */
export interface ZkReassignment {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
}

/** `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]}` (Kafka's ReassignPartitionsZNode). */
export const ReassignPartitionsZNode = {
  encode: (rs: readonly ZkReassignment[]): Buffer =>
    json({
      version: 1,
      partitions: rs.map((r) => ({ topic: r.topic, partition: r.partition, replicas: [...r.replicas] })),
    }),
  decode(path: string, data: Buffer): ZkReassignment[] {
    const o = parse(path, data);
    if (!Array.isArray(o.partitions)) throw bad(path, "partitions: expected an array");
    return o.partitions.map((e: unknown, i: number) => {
      const r = e as Record<string, unknown> | null;
      if (
        r === null ||
        typeof r !== "object" ||
        typeof r.topic !== "string" ||
        !Number.isInteger(r.partition)
      )
        throw bad(path, `partitions[${i}]: expected {topic, partition, replicas}`);
      return {
        topic: r.topic,
        partition: r.partition as number,
        replicas: intArray(path, r.replicas, `partitions[${i}].replicas`),
      };
    });
  },
};

// ---- /brokers/topics/<t>/partitions/<p>/state ----
export interface LeaderAndIsr {
  readonly controllerEpoch: number;
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
}

export const TopicPartitionStateZNode = {
  encode: (s: LeaderAndIsr): Buffer =>
    json({
      controller_epoch: s.controllerEpoch,
      leader: s.leader,
      version: 1,
      leader_epoch: s.leaderEpoch,
      isr: [...s.isr],
    }),
  decode(path: string, data: Buffer): LeaderAndIsr {
    const o = parse(path, data);
    for (const k of ["controller_epoch", "leader", "leader_epoch"]) {
      if (!Number.isInteger(o[k])) throw bad(path, `missing ${k}`);
    }
    return {
      controllerEpoch: o.controller_epoch as number,
      leader: o.leader as number,
      leaderEpoch: o.leader_epoch as number,
      isr: intArray(path, o.isr, "isr"),
    };
  },
};

// ---- /config/<entityType>/<name> ----
export const ConfigEntityZNode = {
  encode: (config: Record<string, string>): Buffer => json({ version: 1, config }),
  decode(path: string, data: Buffer): Record<string, string> {
    if (data.length === 0) return {};
    const o = parse(path, data);
    const c = o.config ?? {};
    if (typeof c !== "object" || c === null || Array.isArray(c))
      throw bad(path, "config: expected an object");
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(c as Record<string, unknown>)) out[k] = String(v);
    return out;
  },
};

// ---- /config/changes/config_change_NNNNNNNNNN ----
export const ConfigEntityChangeNotificationSequenceZNode = {
  encode: (entityPath: string): Buffer => json({ version: 2, entity_path: entityPath }),
  decode(path: string, data: Buffer): string {
    const o = parse(path, data);
    if (typeof o.entity_path !== "string") throw bad(path, "missing entity_path");
    return o.entity_path;
  },
};
