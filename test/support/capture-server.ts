// Test-only: a tiny Kafka-speaking TCP server used to capture the request frames real clients send.
// It is NOT the broker. It keeps just enough state (topics, partition logs of the batches produced,
// a trivial single-member consumer group, committed offsets) for a client to go through its normal
// flows: bootstrap, metadata, produce, consume with a group, admin calls. Every request frame is
// recorded byte for byte (without its size prefix). Requests are decoded and responses encoded with
// the generated codec, so running a capture is also an exercise of that codec.
//
// Listens on 127.0.0.1 only, on a random port. Requests on one connection are answered in order, one
// at a time, like a Kafka broker does.

import { createHash, randomUUID } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { type DecodedRequest, decodeRequest, encodeResponse } from "../../src/protocol/framing.js";
import { API_BY_KEY, type ApiDefinition, ApiKey, Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { defaultAddOffsetsToTxnResponse } from "../../src/protocol/generated/messages/AddOffsetsToTxnResponse.js";
import type { AddPartitionsToTxnRequest } from "../../src/protocol/generated/messages/AddPartitionsToTxnRequest.js";
import {
  type AddPartitionsToTxnResponse,
  type AddPartitionsToTxnTopicResult,
  defaultAddPartitionsToTxnResponse,
} from "../../src/protocol/generated/messages/AddPartitionsToTxnResponse.js";
import type { AlterConfigsRequest } from "../../src/protocol/generated/messages/AlterConfigsRequest.js";
import {
  defaultAlterConfigsResourceResponse,
  defaultAlterConfigsResponse,
} from "../../src/protocol/generated/messages/AlterConfigsResponse.js";
import {
  type ApiVersion,
  type ApiVersionsResponse,
  defaultApiVersionsResponse,
} from "../../src/protocol/generated/messages/ApiVersionsResponse.js";
import type { CreatePartitionsRequest } from "../../src/protocol/generated/messages/CreatePartitionsRequest.js";
import {
  defaultCreatePartitionsResponse,
  defaultCreatePartitionsTopicResult,
} from "../../src/protocol/generated/messages/CreatePartitionsResponse.js";
import type { CreateTopicsRequest } from "../../src/protocol/generated/messages/CreateTopicsRequest.js";
import {
  defaultCreatableTopicResult,
  defaultCreateTopicsResponse,
} from "../../src/protocol/generated/messages/CreateTopicsResponse.js";
import type { DeleteGroupsRequest } from "../../src/protocol/generated/messages/DeleteGroupsRequest.js";
import {
  defaultDeletableGroupResult,
  defaultDeleteGroupsResponse,
} from "../../src/protocol/generated/messages/DeleteGroupsResponse.js";
import type { DeleteRecordsRequest } from "../../src/protocol/generated/messages/DeleteRecordsRequest.js";
import {
  defaultDeleteRecordsPartitionResult,
  defaultDeleteRecordsResponse,
  defaultDeleteRecordsTopicResult,
} from "../../src/protocol/generated/messages/DeleteRecordsResponse.js";
import type { DeleteTopicsRequest } from "../../src/protocol/generated/messages/DeleteTopicsRequest.js";
import {
  defaultDeletableTopicResult,
  defaultDeleteTopicsResponse,
} from "../../src/protocol/generated/messages/DeleteTopicsResponse.js";
import { defaultDescribeAclsResponse } from "../../src/protocol/generated/messages/DescribeAclsResponse.js";
import {
  defaultDescribeClusterBroker,
  defaultDescribeClusterResponse,
} from "../../src/protocol/generated/messages/DescribeClusterResponse.js";
import type { DescribeConfigsRequest } from "../../src/protocol/generated/messages/DescribeConfigsRequest.js";
import {
  type DescribeConfigsResourceResult,
  defaultDescribeConfigsResourceResult,
  defaultDescribeConfigsResponse,
  defaultDescribeConfigsResult,
} from "../../src/protocol/generated/messages/DescribeConfigsResponse.js";
import type { DescribeGroupsRequest } from "../../src/protocol/generated/messages/DescribeGroupsRequest.js";
import {
  defaultDescribedGroup,
  defaultDescribedGroupMember,
  defaultDescribeGroupsResponse,
} from "../../src/protocol/generated/messages/DescribeGroupsResponse.js";
import type { EndTxnRequest } from "../../src/protocol/generated/messages/EndTxnRequest.js";
import { defaultEndTxnResponse } from "../../src/protocol/generated/messages/EndTxnResponse.js";
import type { FetchRequest } from "../../src/protocol/generated/messages/FetchRequest.js";
import {
  defaultFetchableTopicResponse,
  defaultFetchResponse,
  defaultPartitionData,
  type FetchResponse,
  type PartitionData,
} from "../../src/protocol/generated/messages/FetchResponse.js";
import type { FindCoordinatorRequest } from "../../src/protocol/generated/messages/FindCoordinatorRequest.js";
import {
  defaultCoordinator,
  defaultFindCoordinatorResponse,
} from "../../src/protocol/generated/messages/FindCoordinatorResponse.js";
import { defaultHeartbeatResponse } from "../../src/protocol/generated/messages/HeartbeatResponse.js";
import type { IncrementalAlterConfigsRequest } from "../../src/protocol/generated/messages/IncrementalAlterConfigsRequest.js";
import {
  defaultAlterConfigsResourceResponse as defaultIncrementalAlterConfigsResourceResponse,
  defaultIncrementalAlterConfigsResponse,
} from "../../src/protocol/generated/messages/IncrementalAlterConfigsResponse.js";
import type { InitProducerIdRequest } from "../../src/protocol/generated/messages/InitProducerIdRequest.js";
import { defaultInitProducerIdResponse } from "../../src/protocol/generated/messages/InitProducerIdResponse.js";
import type { JoinGroupRequest } from "../../src/protocol/generated/messages/JoinGroupRequest.js";
import {
  defaultJoinGroupResponse,
  defaultJoinGroupResponseMember,
} from "../../src/protocol/generated/messages/JoinGroupResponse.js";
import type { LeaveGroupRequest } from "../../src/protocol/generated/messages/LeaveGroupRequest.js";
import {
  defaultLeaveGroupResponse,
  defaultMemberResponse,
} from "../../src/protocol/generated/messages/LeaveGroupResponse.js";
import {
  defaultListedGroup,
  defaultListGroupsResponse,
} from "../../src/protocol/generated/messages/ListGroupsResponse.js";
import type { ListOffsetsRequest } from "../../src/protocol/generated/messages/ListOffsetsRequest.js";
import {
  defaultListOffsetsPartitionResponse,
  defaultListOffsetsResponse,
  defaultListOffsetsTopicResponse,
} from "../../src/protocol/generated/messages/ListOffsetsResponse.js";
import type { MetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import {
  defaultMetadataResponse,
  defaultMetadataResponseBroker,
  defaultMetadataResponsePartition,
  defaultMetadataResponseTopic,
  type MetadataResponseTopic,
} from "../../src/protocol/generated/messages/MetadataResponse.js";
import type { OffsetCommitRequest } from "../../src/protocol/generated/messages/OffsetCommitRequest.js";
import {
  defaultOffsetCommitResponse,
  defaultOffsetCommitResponsePartition,
  defaultOffsetCommitResponseTopic,
} from "../../src/protocol/generated/messages/OffsetCommitResponse.js";
import type { OffsetFetchRequest } from "../../src/protocol/generated/messages/OffsetFetchRequest.js";
import {
  defaultOffsetFetchResponse,
  defaultOffsetFetchResponseGroup,
  defaultOffsetFetchResponsePartition,
  defaultOffsetFetchResponsePartitions,
  defaultOffsetFetchResponseTopic,
  defaultOffsetFetchResponseTopics,
} from "../../src/protocol/generated/messages/OffsetFetchResponse.js";
import type { OffsetForLeaderEpochRequest } from "../../src/protocol/generated/messages/OffsetForLeaderEpochRequest.js";
import {
  defaultEpochEndOffset,
  defaultOffsetForLeaderEpochResponse,
  defaultOffsetForLeaderTopicResult,
} from "../../src/protocol/generated/messages/OffsetForLeaderEpochResponse.js";
import type { ProduceRequest } from "../../src/protocol/generated/messages/ProduceRequest.js";
import {
  defaultPartitionProduceResponse,
  defaultProduceResponse,
  defaultTopicProduceResponse,
} from "../../src/protocol/generated/messages/ProduceResponse.js";
import type { SyncGroupRequest } from "../../src/protocol/generated/messages/SyncGroupRequest.js";
import { defaultSyncGroupResponse } from "../../src/protocol/generated/messages/SyncGroupResponse.js";
import type { TxnOffsetCommitRequest } from "../../src/protocol/generated/messages/TxnOffsetCommitRequest.js";
import {
  defaultTxnOffsetCommitResponse,
  defaultTxnOffsetCommitResponsePartition,
  defaultTxnOffsetCommitResponseTopic,
} from "../../src/protocol/generated/messages/TxnOffsetCommitResponse.js";

/** One request frame as received, without its 4-byte size prefix. */
export interface CapturedFrame {
  /** Arrival order across all connections of this server. */
  readonly seq: number;
  /** Connection number (1-based, in accept order). */
  readonly connection: number;
  readonly apiKey: number;
  readonly apiVersion: number;
  /** The API's name, or `Unknown<key>` when the key is not in the API table. */
  readonly apiName: string;
  readonly frame: Buffer;
}

/** A problem the server met while serving a client: a request it could not decode, a response it could not encode. */
export interface CaptureProblem {
  readonly seq: number;
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly message: string;
}

export interface CaptureServerOptions {
  /** Partitions of a topic created implicitly (auto-creation on Metadata/Produce). Default 1. */
  readonly defaultPartitions?: number;
  /** Upper bound on how long an empty Fetch is held (ms), whatever the client's max wait. Default 300. */
  readonly maxFetchWaitMs?: number;
  /** Largest frame accepted; bigger ones close the connection. Default 16 MiB. */
  readonly maxFrameBytes?: number;
  /** Receives one-line diagnostics. */
  readonly log?: (line: string) => void;
}

type Body = unknown;
/** Returned by a handler when the request gets no response at all (Produce with acks=0). */
const NO_RESPONSE: unique symbol = Symbol("no-response");
type HandlerResult = Body | typeof NO_RESPONSE;
type Handler = (req: DecodedRequest, conn: ConnectionState) => HandlerResult | Promise<HandlerResult>;

interface ConnectionState {
  readonly id: number;
  readonly socket: Socket;
  readonly remoteHost: string;
}

interface PartitionLog {
  /** Record batches (or legacy message-set entries) with broker-assigned offsets. */
  readonly batches: Array<{ baseOffset: bigint; lastOffset: bigint; bytes: Buffer }>;
  logEndOffset: bigint;
  logStartOffset: bigint;
}

interface TopicState {
  readonly name: string;
  readonly topicId: string;
  readonly partitions: PartitionLog[];
  readonly configs: Map<string, string>;
}

interface GroupMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly metadata: Buffer;
  assignment: Buffer;
}

interface GroupState {
  readonly groupId: string;
  generationId: number;
  protocolType: string;
  protocolName: string;
  leader: string;
  members: Map<string, GroupMember>;
  /** topic -> partition -> committed offset */
  readonly offsets: Map<
    string,
    Map<number, { offset: bigint; leaderEpoch: number; metadata: string | null }>
  >;
}

const CLUSTER_ID = "tributary-capture-00";
const NODE_ID = 0;
const EMPTY = Buffer.alloc(0);

/** A deterministic topic id (base64url of 16 bytes) derived from the topic name. */
export function topicIdFor(name: string): string {
  const b = createHash("sha256").update(`topic:${name}`).digest().subarray(0, 16);
  return b.toString("base64url");
}

const TOPIC_CONFIGS: ReadonlyArray<[string, string]> = [
  ["cleanup.policy", "delete"],
  ["compression.type", "producer"],
  ["retention.ms", "604800000"],
  ["segment.bytes", "1073741824"],
  ["max.message.bytes", "1048588"],
  ["min.insync.replicas", "1"],
];

const BROKER_CONFIGS: ReadonlyArray<[string, string]> = [
  ["broker.id", "0"],
  ["num.partitions", "1"],
  ["log.retention.hours", "168"],
  ["log.segment.bytes", "1073741824"],
  ["default.replication.factor", "1"],
  ["auto.create.topics.enable", "true"],
];

export class CaptureServer {
  readonly host = "127.0.0.1";
  readonly frames: CapturedFrame[] = [];
  readonly problems: CaptureProblem[] = [];

  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly topics = new Map<string, TopicState>();
  private readonly topicsById = new Map<string, TopicState>();
  private readonly deletedTopics = new Set<string>();
  private readonly groups = new Map<string, GroupState>();
  private readonly handlers = new Map<number, Handler>();
  private readonly defaultPartitions: number;
  private readonly maxFetchWaitMs: number;
  private readonly maxFrameBytes: number;
  private readonly log: (line: string) => void;
  private nextSeq = 0;
  private nextConnection = 0;
  private nextProducerId = 1000n;
  private closed = false;
  private readonly pendingTimers = new Set<NodeJS.Timeout>();
  port = 0;

  private constructor(options: CaptureServerOptions) {
    this.defaultPartitions = options.defaultPartitions ?? 1;
    this.maxFetchWaitMs = options.maxFetchWaitMs ?? 300;
    this.maxFrameBytes = options.maxFrameBytes ?? 16 * 1024 * 1024;
    this.log = options.log ?? (() => {});
    this.server = createServer((socket) => this.onConnection(socket));
    this.registerHandlers();
  }

  /** Starts a server on 127.0.0.1 and a random free port. */
  static async start(options: CaptureServerOptions = {}): Promise<CaptureServer> {
    const s = new CaptureServer(options);
    await new Promise<void>((resolve, reject) => {
      s.server.once("error", reject);
      s.server.listen(0, "127.0.0.1", () => {
        s.server.off("error", reject);
        resolve();
      });
    });
    const addr = s.server.address();
    if (addr === null || typeof addr === "string") throw new Error("capture server has no TCP address");
    s.port = addr.port;
    return s;
  }

  get bootstrap(): string {
    return `${this.host}:${this.port}`;
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.pendingTimers) clearTimeout(t);
    this.pendingTimers.clear();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The API keys this server answers, with the version range it advertises. */
  supportedApis(): ApiVersion[] {
    const out: ApiVersion[] = [];
    for (const key of [...this.handlers.keys()].sort((a, b) => a - b)) {
      const api = API_BY_KEY[key];
      if (!api) continue;
      out.push({ apiKey: key, minVersion: api.minVersion, maxVersion: api.maxVersion });
    }
    return out;
  }

  // ---- connection handling -------------------------------------------------------------------

  private onConnection(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    const conn: ConnectionState = {
      id: ++this.nextConnection,
      socket,
      remoteHost: socket.remoteAddress ?? "127.0.0.1",
    };
    this.sockets.add(socket);
    socket.setNoDelay(true);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let chain: Promise<void> = Promise.resolve();
    socket.on("data", (chunk: Buffer) => {
      pending.push(chunk);
      pendingBytes += chunk.length;
      while (pendingBytes >= 4) {
        const head = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
        pending = [head];
        const size = head.readInt32BE(0);
        if (size < 0 || size > this.maxFrameBytes) {
          this.log(`conn ${conn.id}: frame size ${size} out of bounds, closing`);
          socket.destroy();
          return;
        }
        if (pendingBytes < 4 + size) break;
        // Copy: the captured frame must not alias the socket's buffer, which is reused for the rest.
        const frame = Buffer.from(head.subarray(4, 4 + size));
        const rest = head.subarray(4 + size);
        pending = rest.length > 0 ? [rest] : [];
        pendingBytes = rest.length;
        const captured = this.record(conn, frame);
        chain = chain
          .then(() => this.serve(conn, captured))
          .catch((e: unknown) => this.fail(conn, captured, e));
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => this.sockets.delete(socket));
  }

  private record(conn: ConnectionState, frame: Buffer): CapturedFrame {
    const apiKey = frame.length >= 2 ? frame.readInt16BE(0) : -1;
    const apiVersion = frame.length >= 4 ? frame.readInt16BE(2) : -1;
    const api = apiKey >= 0 ? API_BY_KEY[apiKey] : undefined;
    const captured: CapturedFrame = {
      seq: this.nextSeq++,
      connection: conn.id,
      apiKey,
      apiVersion,
      apiName: api ? api.name : `Unknown${apiKey}`,
      frame,
    };
    this.frames.push(captured);
    return captured;
  }

  private fail(conn: ConnectionState, f: CapturedFrame, e: unknown): void {
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    this.problems.push({ seq: f.seq, apiKey: f.apiKey, apiVersion: f.apiVersion, message });
    this.log(`conn ${conn.id}: ${f.apiName} v${f.apiVersion} failed: ${message}`);
    conn.socket.destroy();
  }

  private async serve(conn: ConnectionState, f: CapturedFrame): Promise<void> {
    if (conn.socket.destroyed) return;
    const decoded = decodeRequest(f.frame);
    if (!decoded.ok) {
      if (decoded.kind === "unsupported-version" && decoded.api.apiKey === ApiKey.ApiVersions) {
        // Kafka answers an ApiVersions request it cannot parse with v0 and UNSUPPORTED_VERSION.
        const body: ApiVersionsResponse = {
          ...defaultApiVersionsResponse(),
          errorCode: ErrorCode.UNSUPPORTED_VERSION,
          apiKeys: this.supportedApis(),
        };
        const api = Apis.ApiVersions as unknown as ApiDefinition<unknown, ApiVersionsResponse>;
        this.send(conn, encodeResponse(api, 0, decoded.correlationId, body));
        return;
      }
      const what = decoded.kind === "malformed" ? `malformed: ${decoded.message}` : decoded.kind;
      throw new Error(`request seq ${f.seq} (${f.apiName} v${f.apiVersion}) not decoded: ${what}`);
    }
    const req = decoded.request;
    const handler = this.handlers.get(req.api.apiKey);
    if (!handler) throw new Error(`no handler for ${req.api.name} v${req.header.requestApiVersion}`);
    const body = await handler(req, conn);
    if (body === NO_RESPONSE) return;
    const chunks = encodeResponse(
      req.api as ApiDefinition<unknown, unknown>,
      req.header.requestApiVersion,
      req.header.correlationId,
      body,
    );
    this.send(conn, chunks);
  }

  private send(conn: ConnectionState, chunks: Buffer[]): void {
    if (conn.socket.destroyed) return;
    conn.socket.write(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.pendingTimers.delete(t);
        resolve();
      }, ms);
      this.pendingTimers.add(t);
    });
  }

  // ---- state helpers -------------------------------------------------------------------------

  private createTopic(name: string, partitions: number): TopicState {
    const t: TopicState = {
      name,
      topicId: topicIdFor(name),
      partitions: [],
      configs: new Map(TOPIC_CONFIGS),
    };
    for (let i = 0; i < Math.max(1, partitions); i++) t.partitions.push(newPartition());
    this.topics.set(name, t);
    this.topicsById.set(t.topicId, t);
    this.deletedTopics.delete(name);
    return t;
  }

  /** The topic, auto-creating it unless it was explicitly deleted. */
  private topic(name: string, autoCreate = true): TopicState | undefined {
    const t = this.topics.get(name);
    if (t) return t;
    if (!autoCreate || this.deletedTopics.has(name) || name.length === 0) return undefined;
    return this.createTopic(name, this.defaultPartitions);
  }

  private deleteTopic(t: TopicState): void {
    this.topics.delete(t.name);
    this.topicsById.delete(t.topicId);
    this.deletedTopics.add(t.name);
  }

  private group(groupId: string): GroupState {
    let g = this.groups.get(groupId);
    if (!g) {
      g = {
        groupId,
        generationId: 0,
        protocolType: "consumer",
        protocolName: "",
        leader: "",
        members: new Map(),
        offsets: new Map(),
      };
      this.groups.set(groupId, g);
    }
    return g;
  }

  private metadataTopic(t: TopicState, version: number): MetadataResponseTopic {
    return {
      ...defaultMetadataResponseTopic(),
      name: t.name,
      topicId: version >= 10 ? t.topicId : defaultMetadataResponseTopic().topicId,
      partitions: t.partitions.map((_, i) => ({
        ...defaultMetadataResponsePartition(),
        partitionIndex: i,
        leaderId: NODE_ID,
        leaderEpoch: 0,
        replicaNodes: [NODE_ID],
        isrNodes: [NODE_ID],
        offlineReplicas: [],
      })),
    };
  }

  // ---- handlers --------------------------------------------------------------------------------

  private registerHandlers(): void {
    const h = this.handlers;
    h.set(ApiKey.ApiVersions, () => ({ ...defaultApiVersionsResponse(), apiKeys: this.supportedApis() }));
    h.set(ApiKey.Metadata, (req) => this.onMetadata(req));
    h.set(ApiKey.Produce, (req) => this.onProduce(req));
    h.set(ApiKey.Fetch, (req) => this.onFetch(req));
    h.set(ApiKey.ListOffsets, (req) => this.onListOffsets(req));
    h.set(ApiKey.OffsetForLeaderEpoch, (req) => this.onOffsetForLeaderEpoch(req));
    h.set(ApiKey.FindCoordinator, (req) => this.onFindCoordinator(req));
    h.set(ApiKey.JoinGroup, (req, conn) => this.onJoinGroup(req, conn));
    h.set(ApiKey.SyncGroup, (req) => this.onSyncGroup(req));
    h.set(ApiKey.Heartbeat, () => defaultHeartbeatResponse());
    h.set(ApiKey.LeaveGroup, (req) => this.onLeaveGroup(req));
    h.set(ApiKey.OffsetCommit, (req) => this.onOffsetCommit(req));
    h.set(ApiKey.OffsetFetch, (req) => this.onOffsetFetch(req));
    h.set(ApiKey.DescribeGroups, (req) => this.onDescribeGroups(req));
    h.set(ApiKey.ListGroups, (req) => this.onListGroups(req));
    h.set(ApiKey.DeleteGroups, (req) => this.onDeleteGroups(req));
    h.set(ApiKey.InitProducerId, (req) => this.onInitProducerId(req));
    h.set(ApiKey.AddPartitionsToTxn, (req) => this.onAddPartitionsToTxn(req));
    h.set(ApiKey.AddOffsetsToTxn, () => defaultAddOffsetsToTxnResponse());
    h.set(ApiKey.EndTxn, (req) => this.onEndTxn(req));
    h.set(ApiKey.TxnOffsetCommit, (req) => this.onTxnOffsetCommit(req));
    h.set(ApiKey.CreateTopics, (req) => this.onCreateTopics(req));
    h.set(ApiKey.DeleteTopics, (req) => this.onDeleteTopics(req));
    h.set(ApiKey.CreatePartitions, (req) => this.onCreatePartitions(req));
    h.set(ApiKey.DeleteRecords, (req) => this.onDeleteRecords(req));
    h.set(ApiKey.DescribeConfigs, (req) => this.onDescribeConfigs(req));
    h.set(ApiKey.AlterConfigs, (req) => this.onAlterConfigs(req));
    h.set(ApiKey.IncrementalAlterConfigs, (req) => this.onIncrementalAlterConfigs(req));
    h.set(ApiKey.DescribeAcls, () => ({
      ...defaultDescribeAclsResponse(),
      errorMessage: null,
      resources: [],
    }));
    h.set(ApiKey.DescribeCluster, () => ({
      ...defaultDescribeClusterResponse(),
      clusterId: CLUSTER_ID,
      controllerId: NODE_ID,
      brokers: [{ ...defaultDescribeClusterBroker(), brokerId: NODE_ID, host: this.host, port: this.port }],
    }));
  }

  private onMetadata(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as MetadataRequest;
    const topics: MetadataResponseTopic[] = [];
    // v0: an empty array means "all topics"; v1+: null means all, empty means none.
    const all = body.topics === null || (v === 0 && body.topics.length === 0);
    if (all) {
      for (const t of this.topics.values()) topics.push(this.metadataTopic(t, v));
    } else {
      for (const rt of body.topics ?? []) {
        let t: TopicState | undefined;
        if (rt.name !== null) t = this.topic(rt.name);
        else t = this.topicsById.get(rt.topicId);
        if (t) topics.push(this.metadataTopic(t, v));
        else
          topics.push({
            ...defaultMetadataResponseTopic(),
            errorCode: rt.name !== null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID,
            name: rt.name,
            topicId: v >= 10 ? rt.topicId : defaultMetadataResponseTopic().topicId,
          });
      }
    }
    return {
      ...defaultMetadataResponse(),
      brokers: [
        { ...defaultMetadataResponseBroker(), nodeId: NODE_ID, host: this.host, port: this.port, rack: null },
      ],
      clusterId: CLUSTER_ID,
      controllerId: NODE_ID,
      topics,
    };
  }

  private onProduce(req: DecodedRequest): HandlerResult {
    const body = req.body as ProduceRequest;
    const out = defaultProduceResponse();
    for (const td of body.topicData) {
      const t = this.topic(td.name);
      const tr = {
        ...defaultTopicProduceResponse(),
        name: td.name,
        partitionResponses: [] as ReturnType<typeof defaultPartitionProduceResponse>[],
      };
      for (const pd of td.partitionData) {
        const pr = { ...defaultPartitionProduceResponse(), index: pd.index };
        const log = t?.partitions[pd.index];
        if (!log) {
          pr.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          pr.baseOffset = -1n;
        } else {
          pr.baseOffset = appendToLog(log, pd.records ?? EMPTY);
          pr.logStartOffset = log.logStartOffset;
        }
        tr.partitionResponses.push(pr);
      }
      out.responses.push(tr);
    }
    if (body.acks === 0) return NO_RESPONSE;
    return out;
  }

  private async onFetch(req: DecodedRequest): Promise<Body> {
    const v = req.header.requestApiVersion;
    const body = req.body as FetchRequest;
    const build = (): { res: FetchResponse; bytes: number } => {
      const res = defaultFetchResponse();
      let bytes = 0;
      for (const ft of body.topics) {
        const t = v >= 13 ? this.topicsById.get(ft.topicId) : this.topics.get(ft.topic);
        const tr = {
          ...defaultFetchableTopicResponse(),
          topic: v >= 13 ? "" : ft.topic,
          topicId: ft.topicId,
          partitions: [] as PartitionData[],
        };
        for (const fp of ft.partitions) {
          const pd: PartitionData = { ...defaultPartitionData(), partitionIndex: fp.partition };
          const log = t?.partitions[fp.partition];
          if (!log) {
            pd.errorCode = t || v < 13 ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID;
            pd.highWatermark = -1n;
          } else if (fp.fetchOffset > log.logEndOffset || fp.fetchOffset < log.logStartOffset) {
            pd.errorCode = ErrorCode.OFFSET_OUT_OF_RANGE;
            pd.highWatermark = log.logEndOffset;
          } else {
            pd.highWatermark = log.logEndOffset;
            const chosen: Buffer[] = [];
            let size = 0;
            for (const b of log.batches) {
              if (b.lastOffset < fp.fetchOffset) continue;
              if (chosen.length > 0 && size + b.bytes.length > fp.partitionMaxBytes) break;
              chosen.push(b.bytes);
              size += b.bytes.length;
            }
            pd.records = chosen.length === 0 ? EMPTY : Buffer.concat(chosen);
            bytes += size;
          }
          if (v >= 4) pd.lastStableOffset = pd.highWatermark;
          if (v >= 5) pd.logStartOffset = log ? log.logStartOffset : -1n;
          if (v >= 4) pd.abortedTransactions = body.isolationLevel === 1 ? [] : null;
          tr.partitions.push(pd);
        }
        res.responses.push(tr);
      }
      return { res, bytes };
    };
    let r = build();
    if (r.bytes === 0 && body.maxWaitMs > 0) {
      // Like a broker with nothing to return: hold the request a while, so a consumer does not spin.
      await this.sleep(Math.min(body.maxWaitMs, this.maxFetchWaitMs));
      r = build();
    }
    return r.res;
  }

  private onListOffsets(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as ListOffsetsRequest;
    const out = defaultListOffsetsResponse();
    for (const lt of body.topics) {
      const t = this.topic(lt.name, false);
      const tr = {
        ...defaultListOffsetsTopicResponse(),
        name: lt.name,
        partitions: [] as ReturnType<typeof defaultListOffsetsPartitionResponse>[],
      };
      for (const lp of lt.partitions) {
        const pr = { ...defaultListOffsetsPartitionResponse(), partitionIndex: lp.partitionIndex };
        const log = t?.partitions[lp.partitionIndex];
        if (!log) {
          pr.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        } else {
          let offset: bigint;
          if (lp.timestamp === -1n) offset = log.logEndOffset;
          else if (lp.timestamp === -2n) offset = log.logStartOffset;
          else if (lp.timestamp === -3n) offset = log.logEndOffset > 0n ? log.logEndOffset - 1n : 0n;
          else offset = log.logStartOffset;
          if (v === 0) pr.oldStyleOffsets = [offset];
          else {
            pr.offset = offset;
            pr.timestamp = -1n;
          }
          if (v >= 4) pr.leaderEpoch = 0;
        }
        tr.partitions.push(pr);
      }
      out.topics.push(tr);
    }
    return out;
  }

  private onOffsetForLeaderEpoch(req: DecodedRequest): Body {
    const body = req.body as OffsetForLeaderEpochRequest;
    const out = defaultOffsetForLeaderEpochResponse();
    for (const rt of body.topics) {
      const t = this.topics.get(rt.topic);
      const tr = {
        ...defaultOffsetForLeaderTopicResult(),
        topic: rt.topic,
        partitions: [] as ReturnType<typeof defaultEpochEndOffset>[],
      };
      for (const rp of rt.partitions) {
        const log = t?.partitions[rp.partition];
        tr.partitions.push({
          ...defaultEpochEndOffset(),
          partition: rp.partition,
          errorCode: log ? 0 : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          leaderEpoch: log ? 0 : -1,
          endOffset: log ? log.logEndOffset : -1n,
        });
      }
      out.topics.push(tr);
    }
    return out;
  }

  private onFindCoordinator(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as FindCoordinatorRequest;
    if (v >= 4) {
      return {
        ...defaultFindCoordinatorResponse(),
        coordinators: body.coordinatorKeys.map((key) => ({
          ...defaultCoordinator(),
          key,
          nodeId: NODE_ID,
          host: this.host,
          port: this.port,
          errorMessage: null,
        })),
      };
    }
    return {
      ...defaultFindCoordinatorResponse(),
      errorMessage: null,
      nodeId: NODE_ID,
      host: this.host,
      port: this.port,
    };
  }

  private onJoinGroup(req: DecodedRequest, conn: ConnectionState): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as JoinGroupRequest;
    const g = this.group(body.groupId);
    const base = {
      ...defaultJoinGroupResponse(),
      protocolType: v >= 7 ? body.protocolType : defaultJoinGroupResponse().protocolType,
    };
    if (body.memberId === "" && v >= 4 && body.groupInstanceId === null) {
      // KIP-394: the first join of a dynamic member gets its id back with MEMBER_ID_REQUIRED.
      return {
        ...base,
        errorCode: ErrorCode.MEMBER_ID_REQUIRED,
        generationId: -1,
        protocolName: v >= 7 ? null : "",
        memberId: `${req.header.clientId ?? "client"}-${randomUUID()}`,
      };
    }
    const memberId =
      body.memberId === "" ? `${req.header.clientId ?? "client"}-${randomUUID()}` : body.memberId;
    const protocol = body.protocols[0];
    // A trivial group: the joining member is the only member and its leader.
    g.generationId += 1;
    g.protocolType = body.protocolType;
    g.protocolName = protocol?.name ?? "";
    g.leader = memberId;
    g.members = new Map([
      [
        memberId,
        {
          memberId,
          groupInstanceId: body.groupInstanceId,
          clientId: req.header.clientId ?? "",
          clientHost: `/${conn.remoteHost}`,
          metadata: protocol ? Buffer.from(protocol.metadata) : EMPTY,
          assignment: EMPTY,
        },
      ],
    ]);
    return {
      ...base,
      generationId: g.generationId,
      protocolName: g.protocolName,
      leader: memberId,
      memberId,
      members: [...g.members.values()].map((m) => ({
        ...defaultJoinGroupResponseMember(),
        memberId: m.memberId,
        groupInstanceId: v >= 5 ? m.groupInstanceId : null,
        metadata: m.metadata,
      })),
    };
  }

  private onSyncGroup(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as SyncGroupRequest;
    const g = this.group(body.groupId);
    for (const a of body.assignments) {
      const m = g.members.get(a.memberId);
      if (m) m.assignment = Buffer.from(a.assignment);
    }
    const m = g.members.get(body.memberId);
    return {
      ...defaultSyncGroupResponse(),
      errorCode: m ? 0 : ErrorCode.UNKNOWN_MEMBER_ID,
      protocolType: v >= 5 ? g.protocolType : null,
      protocolName: v >= 5 ? g.protocolName : null,
      assignment: m ? m.assignment : EMPTY,
    };
  }

  private onLeaveGroup(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as LeaveGroupRequest;
    const g = this.group(body.groupId);
    if (v < 3) {
      g.members.delete(body.memberId);
      return defaultLeaveGroupResponse();
    }
    return {
      ...defaultLeaveGroupResponse(),
      members: body.members.map((m) => {
        g.members.delete(m.memberId);
        return { ...defaultMemberResponse(), memberId: m.memberId, groupInstanceId: m.groupInstanceId };
      }),
    };
  }

  private onOffsetCommit(req: DecodedRequest): Body {
    const body = req.body as OffsetCommitRequest;
    const g = this.group(body.groupId);
    const out = defaultOffsetCommitResponse();
    for (const t of body.topics) {
      let committed = g.offsets.get(t.name);
      if (!committed) {
        committed = new Map();
        g.offsets.set(t.name, committed);
      }
      const tr = {
        ...defaultOffsetCommitResponseTopic(),
        name: t.name,
        partitions: [] as ReturnType<typeof defaultOffsetCommitResponsePartition>[],
      };
      for (const p of t.partitions) {
        committed.set(p.partitionIndex, {
          offset: p.committedOffset,
          leaderEpoch: p.committedLeaderEpoch,
          metadata: p.committedMetadata,
        });
        tr.partitions.push({ ...defaultOffsetCommitResponsePartition(), partitionIndex: p.partitionIndex });
      }
      out.topics.push(tr);
    }
    return out;
  }

  private onOffsetFetch(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as OffsetFetchRequest;
    const lookup = (groupId: string, topics: Array<{ name: string; partitionIndexes: number[] }> | null) => {
      const g = this.group(groupId);
      const wanted =
        topics ??
        [...g.offsets.entries()].map(([name, parts]) => ({ name, partitionIndexes: [...parts.keys()] }));
      return wanted.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => {
          const c = g.offsets.get(t.name)?.get(p);
          return {
            partitionIndex: p,
            committedOffset: c ? c.offset : -1n,
            committedLeaderEpoch: c ? c.leaderEpoch : -1,
            metadata: c ? c.metadata : "",
          };
        }),
      }));
    };
    const out = defaultOffsetFetchResponse();
    if (v >= 8) {
      out.groups = body.groups.map((rg) => ({
        ...defaultOffsetFetchResponseGroup(),
        groupId: rg.groupId,
        topics: lookup(rg.groupId, rg.topics).map((t) => ({
          ...defaultOffsetFetchResponseTopics(),
          name: t.name,
          partitions: t.partitions.map((p) => ({
            ...defaultOffsetFetchResponsePartitions(),
            ...p,
            committedLeaderEpoch: p.committedLeaderEpoch,
          })),
        })),
      }));
    } else {
      out.topics = lookup(body.groupId, body.topics).map((t) => ({
        ...defaultOffsetFetchResponseTopic(),
        name: t.name,
        partitions: t.partitions.map((p) => ({
          ...defaultOffsetFetchResponsePartition(),
          ...p,
          committedLeaderEpoch: v >= 5 ? p.committedLeaderEpoch : -1,
        })),
      }));
    }
    return out;
  }

  private onDescribeGroups(req: DecodedRequest): Body {
    const body = req.body as DescribeGroupsRequest;
    return {
      ...defaultDescribeGroupsResponse(),
      groups: body.groups.map((groupId) => {
        const g = this.groups.get(groupId);
        if (!g || g.members.size === 0) {
          return {
            ...defaultDescribedGroup(),
            groupId,
            groupState: g ? "Empty" : "Dead",
            protocolType: g?.protocolType ?? "",
          };
        }
        return {
          ...defaultDescribedGroup(),
          groupId,
          groupState: "Stable",
          protocolType: g.protocolType,
          protocolData: g.protocolName,
          members: [...g.members.values()].map((m) => ({
            ...defaultDescribedGroupMember(),
            memberId: m.memberId,
            groupInstanceId: req.header.requestApiVersion >= 4 ? m.groupInstanceId : null,
            clientId: m.clientId,
            clientHost: m.clientHost,
            memberMetadata: m.metadata,
            memberAssignment: m.assignment,
          })),
        };
      }),
    };
  }

  private onListGroups(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    return {
      ...defaultListGroupsResponse(),
      groups: [...this.groups.values()].map((g) => ({
        ...defaultListedGroup(),
        groupId: g.groupId,
        protocolType: g.protocolType,
        groupState: v >= 4 ? (g.members.size > 0 ? "Stable" : "Empty") : defaultListedGroup().groupState,
        groupType: v >= 5 ? "classic" : defaultListedGroup().groupType,
      })),
    };
  }

  private onDeleteGroups(req: DecodedRequest): Body {
    const body = req.body as DeleteGroupsRequest;
    return {
      ...defaultDeleteGroupsResponse(),
      results: body.groupsNames.map((groupId) => {
        const existed = this.groups.delete(groupId);
        return {
          ...defaultDeletableGroupResult(),
          groupId,
          errorCode: existed ? 0 : ErrorCode.GROUP_ID_NOT_FOUND,
        };
      }),
    };
  }

  private onInitProducerId(req: DecodedRequest): Body {
    const body = req.body as InitProducerIdRequest;
    // Like Kafka: an idempotent (non-transactional) producer always gets a fresh id, whatever it sent
    // (@platformatic/kafka sends producerId 0 / epoch 0, not -1 / -1); a transactional producer that
    // presents its current id and epoch (KIP-360) gets the epoch bumped.
    const bump = body.transactionalId !== null && body.producerId >= 0n && body.producerEpoch >= 0;
    return {
      ...defaultInitProducerIdResponse(),
      producerId: bump ? body.producerId : this.nextProducerId++,
      producerEpoch: bump ? body.producerEpoch + 1 : 0,
    };
  }

  private onAddPartitionsToTxn(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as AddPartitionsToTxnRequest;
    const results = (
      topics: Array<{ name: string; partitions: number[] }>,
    ): AddPartitionsToTxnTopicResult[] =>
      topics.map((t) => ({
        name: t.name,
        resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: 0 })),
      }));
    const out: AddPartitionsToTxnResponse = defaultAddPartitionsToTxnResponse();
    if (v <= 3) out.resultsByTopicV3AndBelow = results(body.v3AndBelowTopics);
    else
      out.resultsByTransaction = body.transactions.map((tx) => ({
        transactionalId: tx.transactionalId,
        topicResults: results(tx.topics),
      }));
    return out;
  }

  private onEndTxn(req: DecodedRequest): Body {
    const body = req.body as EndTxnRequest;
    const v = req.header.requestApiVersion;
    const out = defaultEndTxnResponse();
    if (v >= 5) {
      out.producerId = body.producerId;
      out.producerEpoch = body.producerEpoch;
    }
    return out;
  }

  private onTxnOffsetCommit(req: DecodedRequest): Body {
    const body = req.body as TxnOffsetCommitRequest;
    return {
      ...defaultTxnOffsetCommitResponse(),
      topics: body.topics.map((t) => ({
        ...defaultTxnOffsetCommitResponseTopic(),
        name: t.name,
        partitions: t.partitions.map((p) => ({
          ...defaultTxnOffsetCommitResponsePartition(),
          partitionIndex: p.partitionIndex,
        })),
      })),
    };
  }

  private onCreateTopics(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as CreateTopicsRequest;
    const out = defaultCreateTopicsResponse();
    for (const ct of body.topics) {
      const r = { ...defaultCreatableTopicResult(), name: ct.name, errorMessage: null as string | null };
      const partitions =
        ct.numPartitions > 0
          ? ct.numPartitions
          : ct.assignments.length > 0
            ? ct.assignments.length
            : this.defaultPartitions;
      if (this.topics.has(ct.name)) {
        r.errorCode = ErrorCode.TOPIC_ALREADY_EXISTS;
        r.errorMessage = `Topic '${ct.name}' already exists.`;
      } else if (!body.validateOnly) {
        const t = this.createTopic(ct.name, partitions);
        for (const c of ct.configs) if (c.value !== null) t.configs.set(c.name, c.value);
      }
      if (v >= 7) r.topicId = topicIdFor(ct.name);
      if (v >= 5) {
        r.numPartitions = partitions;
        r.replicationFactor = ct.replicationFactor > 0 ? ct.replicationFactor : 1;
        r.configs = [];
      }
      if (v < 1) r.errorMessage = defaultCreatableTopicResult().errorMessage;
      out.topics.push(r);
    }
    return out;
  }

  private onDeleteTopics(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as DeleteTopicsRequest;
    const wanted: Array<{ name: string | null; topicId: string }> =
      v >= 6
        ? body.topics
        : body.topicNames.map((name) => ({ name, topicId: defaultDeletableTopicResult().topicId }));
    return {
      ...defaultDeleteTopicsResponse(),
      responses: wanted.map((w) => {
        const t = w.name !== null ? this.topics.get(w.name) : this.topicsById.get(w.topicId);
        if (t) this.deleteTopic(t);
        return {
          ...defaultDeletableTopicResult(),
          name: t ? t.name : w.name,
          topicId: v >= 6 ? (t?.topicId ?? w.topicId) : defaultDeletableTopicResult().topicId,
          errorCode: t ? 0 : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          errorMessage: null,
        };
      }),
    };
  }

  private onCreatePartitions(req: DecodedRequest): Body {
    const body = req.body as CreatePartitionsRequest;
    return {
      ...defaultCreatePartitionsResponse(),
      results: body.topics.map((ct) => {
        const t = this.topics.get(ct.name);
        let errorCode = 0;
        if (!t) errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        else if (ct.count <= t.partitions.length) errorCode = ErrorCode.INVALID_PARTITIONS;
        else if (!body.validateOnly) while (t.partitions.length < ct.count) t.partitions.push(newPartition());
        return { ...defaultCreatePartitionsTopicResult(), name: ct.name, errorCode, errorMessage: null };
      }),
    };
  }

  private onDeleteRecords(req: DecodedRequest): Body {
    const body = req.body as DeleteRecordsRequest;
    return {
      ...defaultDeleteRecordsResponse(),
      topics: body.topics.map((dt) => {
        const t = this.topics.get(dt.name);
        return {
          ...defaultDeleteRecordsTopicResult(),
          name: dt.name,
          partitions: dt.partitions.map((dp) => {
            const log = t?.partitions[dp.partitionIndex];
            if (!log) {
              return {
                ...defaultDeleteRecordsPartitionResult(),
                partitionIndex: dp.partitionIndex,
                lowWatermark: -1n,
                errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              };
            }
            const target = dp.offset === -1n ? log.logEndOffset : dp.offset;
            if (target > log.logStartOffset && target <= log.logEndOffset) log.logStartOffset = target;
            return {
              ...defaultDeleteRecordsPartitionResult(),
              partitionIndex: dp.partitionIndex,
              lowWatermark: log.logStartOffset,
            };
          }),
        };
      }),
    };
  }

  private onDescribeConfigs(req: DecodedRequest): Body {
    const v = req.header.requestApiVersion;
    const body = req.body as DescribeConfigsRequest;
    const entry = (
      name: string,
      value: string,
      isDefault: boolean,
      readOnly: boolean,
    ): DescribeConfigsResourceResult => {
      const source = isDefault ? 5 /* DEFAULT_CONFIG */ : 1; /* DYNAMIC_TOPIC_CONFIG */
      const e: DescribeConfigsResourceResult = {
        ...defaultDescribeConfigsResourceResult(),
        name,
        value,
        readOnly,
        documentation: null,
      };
      if (v === 0) e.isDefault = isDefault;
      else {
        e.configSource = source;
        if (body.includeSynonyms) e.synonyms = [{ name, value, source }];
      }
      if (v >= 3) e.configType = /^\d+$/.test(value) ? 5 /* LONG */ : 2; /* STRING */
      return e;
    };
    return {
      ...defaultDescribeConfigsResponse(),
      results: body.resources.map((res) => {
        const r = {
          ...defaultDescribeConfigsResult(),
          errorMessage: null as string | null,
          resourceType: res.resourceType,
          resourceName: res.resourceName,
          configs: [] as DescribeConfigsResourceResult[],
        };
        let pairs: Array<[string, string, boolean]>;
        if (res.resourceType === 2 /* TOPIC */) {
          const t = this.topics.get(res.resourceName);
          if (!t) {
            r.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
            r.errorMessage = `Topic ${res.resourceName} does not exist`;
            return r;
          }
          const defaults = new Map(TOPIC_CONFIGS);
          pairs = [...t.configs.entries()].map(([k, val]) => [k, val, defaults.get(k) === val]);
        } else if (res.resourceType === 4 /* BROKER */) {
          pairs = BROKER_CONFIGS.map(([k, val]) => [k, val, true]);
        } else {
          pairs = [];
        }
        const keys = res.configurationKeys;
        r.configs = pairs
          .filter(([k]) => keys === null || keys.length === 0 || keys.includes(k))
          .map(([k, val, isDefault]) => entry(k, val, isDefault, res.resourceType === 4));
        return r;
      }),
    };
  }

  private onAlterConfigs(req: DecodedRequest): Body {
    const body = req.body as AlterConfigsRequest;
    return {
      ...defaultAlterConfigsResponse(),
      responses: body.resources.map((res) => {
        const t = res.resourceType === 2 ? this.topics.get(res.resourceName) : undefined;
        if (t && !body.validateOnly) {
          t.configs.clear();
          for (const [k, val] of TOPIC_CONFIGS) t.configs.set(k, val);
          for (const c of res.configs) if (c.value !== null) t.configs.set(c.name, c.value);
        }
        return {
          ...defaultAlterConfigsResourceResponse(),
          errorMessage: null,
          resourceType: res.resourceType,
          resourceName: res.resourceName,
        };
      }),
    };
  }

  private onIncrementalAlterConfigs(req: DecodedRequest): Body {
    const body = req.body as IncrementalAlterConfigsRequest;
    return {
      ...defaultIncrementalAlterConfigsResponse(),
      responses: body.resources.map((res) => {
        const t = res.resourceType === 2 ? this.topics.get(res.resourceName) : undefined;
        if (t && !body.validateOnly) {
          for (const c of res.configs) {
            if (c.configOperation === 0 /* SET */ && c.value !== null) t.configs.set(c.name, c.value);
            else if (c.configOperation === 1 /* DELETE */) t.configs.delete(c.name);
          }
        }
        return {
          ...defaultIncrementalAlterConfigsResourceResponse(),
          errorMessage: null,
          resourceType: res.resourceType,
          resourceName: res.resourceName,
        };
      }),
    };
  }
}

function newPartition(): PartitionLog {
  return { batches: [], logEndOffset: 0n, logStartOffset: 0n };
}

/**
 * Appends the record batches of a produce request to a partition log, assigning offsets by patching
 * each batch's base offset (the first 8 bytes, which the batch CRC does not cover). Magic 0/1 message
 * sets count one offset per entry. Returns the base offset of the first batch.
 */
function appendToLog(log: PartitionLog, records: Buffer): bigint {
  const base = log.logEndOffset;
  let pos = 0;
  while (pos + 12 <= records.length) {
    const length = records.readInt32BE(pos + 8);
    const end = pos + 12 + length;
    if (length < 0 || end > records.length) break;
    const bytes = Buffer.from(records.subarray(pos, end));
    const magic = length >= 5 ? bytes.readInt8(16) : -1;
    const count = magic === 2 && length >= 49 ? BigInt(bytes.readInt32BE(23)) + 1n : 1n;
    bytes.writeBigInt64BE(log.logEndOffset, 0);
    if (magic === 2) {
      log.batches.push({ baseOffset: log.logEndOffset, lastOffset: log.logEndOffset + count - 1n, bytes });
    } else {
      log.batches.push({ baseOffset: log.logEndOffset, lastOffset: log.logEndOffset, bytes });
    }
    log.logEndOffset += count;
    pos = end;
  }
  return base;
}
