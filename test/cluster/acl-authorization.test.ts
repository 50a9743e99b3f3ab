// Issue 21 (authorization): Kafka's AclAuthorizer on a 2-broker cluster on a real ZooKeeper, clients on a
// SASL_PLAINTEXT listener authenticated with PLAIN (alice, bob, admin). The brokers talk to each other on
// the PLAINTEXT listener as User:ANONYMOUS, which is a super user with admin (`super.users`).
//   - ACLs are set with `tributary acls` (through either broker) and stored as Kafka stores them.
//   - The matrix: for every API family a request from alice (who holds the ACLs it needs) and from bob
//     (who holds none) over real sockets: alice gets no authorization error, bob gets Kafka's
//     (TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED); the authorized-operations fields of
//     Metadata, DescribeCluster and DescribeGroups come from the ACLs; a client's Fetch with a replica id
//     and the inter-broker APIs need CLUSTER_ACTION.
//   - Real clients: kcat produce / consume, kafka-python in a consumer group, confluent-kafka's admin and
//     transactional producer — allowed for alice, Kafka's error for bob.
//   - Prefixed ACLs, User:*, deny over allow, super users.
//   - An ACL added or removed through broker 0 applies on broker 1 within seconds.
//   - Replication keeps working: followers fetch as the super user.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ApiDefinition, Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { WireClient } from "../server/wire-client.js";
import { runCommand } from "../support/broker-harness.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

const KCAT = "/usr/bin/kcat";
const PYTHON = "/usr/bin/python3";
const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";';
const ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA";

const AUTH_ERRORS = new Set<number>([
  ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  ErrorCode.GROUP_AUTHORIZATION_FAILED,
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
]);

let cluster: ClusterHarness | undefined;
const clients: WireClient[] = [];

function c(): ClusterHarness {
  assert.ok(cluster, "cluster not started");
  return cluster;
}

/** Broker i's SASL_PLAINTEXT port (the second listener). */
function saslPort(i: number): number {
  return c().brokers[i].listenerPorts()[1];
}

async function wire(user: "alice" | "bob" | "admin", broker = 0): Promise<WireClient> {
  const client = await WireClient.connectSasl(saslPort(broker), user, `${user}-secret`);
  clients.push(client);
  return client;
}

/** `tributary acls` through broker `via`'s PLAINTEXT listener (User:ANONYMOUS, a super user). */
async function acls(args: readonly string[], via = 0): Promise<string> {
  const r = await c().tributary(["acls", "--bootstrap-server", c().brokers[via].bootstrap, ...args]);
  assert.equal(r.code, 0, `acls ${args.join(" ")}: ${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** A request with the generated defaults for the fields not given. */
async function call<Req, Res>(
  client: WireClient,
  api: ApiDefinition<Req, Res>,
  version: number,
  body: Partial<Req>,
): Promise<Res> {
  const mod = await import(`../../src/protocol/generated/messages/${api.name}Request.js`);
  const base = mod[`default${api.name}Request`]() as Req;
  return client.request(api, version, { ...base, ...body });
}

/** Every error code in a response (errorCode, partitionErrorCode … fields, nested). */
function errorCodes(body: unknown): Set<number> {
  const out = new Set<number>();
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== "object" || Buffer.isBuffer(v)) return;
    if (Array.isArray(v)) {
      for (const e of v) walk(e);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      if (/rrorCode$/.test(k) && typeof x === "number") out.add(x);
      else walk(x);
    }
  };
  walk(body);
  return out;
}

function kcatSasl(user: string, broker = 0): string[] {
  return [
    "-b",
    `127.0.0.1:${saslPort(broker)}`,
    "-X",
    "security.protocol=sasl_plaintext",
    "-X",
    "sasl.mechanisms=PLAIN",
    "-X",
    `sasl.username=${user}`,
    "-X",
    `sasl.password=${user}-secret`,
  ];
}

before(async () => {
  cluster = await ClusterHarness.start({
    brokers: 2,
    name: "acls",
    brokerOverrides: (_i, port) => ({
      listeners: `PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:0`,
    }),
    overrides: {
      "sasl.enabled.mechanisms": "PLAIN",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
      "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
      "super.users": "User:ANONYMOUS;User:admin",
    },
  });
  for (const b of c().brokers) assert.equal(b.listenerPorts().length, 2, b.output);
  await c().createTopic("acl-t", 2, 2);
  await c().createTopic("acl-pub-open", 1, 2);
  await c().createTopic("acl-pub-secret", 1, 2);
  await c().createTopic("acl-free", 1, 2);
});

after(async () => {
  for (const w of clients) w.close();
  await cluster?.close();
});

describe("ACLs with real clients and every API", { skip: skipUnlessInstalled("kcat") }, () => {
  test("tributary acls adds ACLs as Kafka stores them, through either broker, and lists them", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const added = await acls(
          [
            "--add",
            "--allow-principal",
            "User:alice",
            "--producer",
            "--topic",
            "acl-t",
            "--transactional-id",
            "acl-tx",
          ],
          1,
        );
        assert.match(
          added,
          /^Adding ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=acl-t, patternType=LITERAL\)`: \n \t\(principal=User:alice, host=\*, operation=WRITE, permissionType=ALLOW\)\n/m,
        );
        await acls([
          "--add",
          "--allow-principal",
          "User:alice",
          "--consumer",
          "--topic",
          "acl-t",
          "--group",
          "acl-g",
        ]);
        await acls([
          "--add",
          "--allow-principal",
          "User:alice",
          "--operation",
          "Delete",
          "--operation",
          "Alter",
          "--operation",
          "AlterConfigs",
          "--topic",
          "acl-t",
        ]);
        await acls([
          "--add",
          "--allow-principal",
          "User:alice",
          "--operation",
          "Describe",
          "--operation",
          "Delete",
          "--group",
          "acl-g",
        ]);
        // The matrix's own group (its JoinGroup / ConsumerGroupHeartbeat leave members behind for a while).
        await acls([
          "--add",
          "--allow-principal",
          "User:alice",
          "--operation",
          "Read",
          "--operation",
          "Describe",
          "--operation",
          "Delete",
          "--group",
          "acl-m",
        ]);
        await acls([
          "--add",
          "--allow-principal",
          "User:alice",
          "--operation",
          "Describe",
          "--operation",
          "Alter",
          "--operation",
          "AlterConfigs",
          "--cluster",
        ]);
        await acls([
          "--add",
          "--allow-principal",
          "User:alice",
          "--operation",
          "Create",
          "--operation",
          "Delete",
          "--operation",
          "DescribeConfigs",
          "--topic",
          "alice-",
          "--resource-pattern-type",
          "prefixed",
        ]);
        const again = await acls([
          "--add",
          "--allow-principal",
          "User:alice",
          "--operation",
          "Read",
          "--topic",
          "acl-t",
        ]);
        assert.match(
          again,
          /^Acl \(pattern=ResourcePattern\(resourceType=TOPIC, name=acl-t, patternType=LITERAL\), entry=\(principal=User:alice, host=\*, operation=READ, permissionType=ALLOW\)\) already exists\.$/m,
        );

        // Kafka's znodes and JSON.
        const doc = JSON.parse((await c().znode("/kafka-acl/Topic/acl-t")) ?? "null");
        assert.equal(doc.version, 1);
        assert.deepEqual(
          doc.acls
            .map((a: Record<string, string>) => `${a.principal} ${a.permissionType} ${a.operation} ${a.host}`)
            .sort(),
          [
            "User:alice Allow Alter *",
            "User:alice Allow AlterConfigs *",
            "User:alice Allow Create *",
            "User:alice Allow Delete *",
            "User:alice Allow Describe *",
            "User:alice Allow Read *",
            "User:alice Allow Write *",
          ],
        );
        assert.ok(await c().znode("/kafka-acl/Cluster/kafka-cluster"));
        assert.ok(await c().znode("/kafka-acl/TransactionalId/acl-tx"));
        assert.ok(await c().znode("/kafka-acl-extended/prefixed/Topic/alice-"));
        assert.ok(
          ((await c().children("/kafka-acl-changes")) ?? []).some((n) => n.startsWith("acl_changes_")),
        );

        const listed = await acls(["--list", "--topic", "acl-t"], 1);
        assert.match(
          listed,
          /^Current ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=acl-t, patternType=LITERAL\)`:\n/m,
        );
        assert.equal((listed.match(/\tprincipal=|\t\(principal=User:alice/g) ?? []).length, 7, listed);
        const byPrincipal = await acls(["--list", "--principal", "User:alice"]);
        assert.match(byPrincipal, /^ACLs for principal `User:alice`$/m);
        assert.match(byPrincipal, /name=alice-, patternType=PREFIXED/);
      },
    );
  });

  test("the matrix: each API with and without the ACL it needs", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        // Both brokers apply the ACLs (change notifications): alice may describe acl-t on broker 1 too.
        for (const b of [0, 1]) {
          const w = await wire("alice", b);
          await c().waitFor(`alice's ACLs on broker ${b}`, 10_000, async () => {
            const md = await call(w, Apis.Metadata, 12, { topics: [{ topicId: ZERO_UUID, name: "acl-t" }] });
            return md.topics[0].errorCode === ErrorCode.NONE ? true : undefined;
          });
        }
        const alice = await wire("alice");
        const bob = await wire("bob");
        const md = await call(alice, Apis.Metadata, 12, { topics: null });
        const controller = md.controllerId;
        const aliceCtl = controller === 0 ? alice : await wire("alice", controller);
        const bobCtl = controller === 0 ? bob : await wire("bob", controller);

        type Row = {
          name: string;
          denied: number;
          send: (who: WireClient, ctl: WireClient) => Promise<unknown>;
        };
        const tp = [{ name: "acl-t", partitions: [0] }];
        const rows: Row[] = [
          {
            name: "Metadata (DESCRIBE topic)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.Metadata, 12, { topics: [{ topicId: ZERO_UUID, name: "acl-t" }] }),
          },
          {
            name: "Metadata auto-creating a topic (CREATE)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.Metadata, 12, {
                topics: [{ topicId: ZERO_UUID, name: "alice-auto" }],
                allowAutoTopicCreation: true,
              }),
          },
          {
            name: "ListOffsets (DESCRIBE topic)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.ListOffsets, 7, {
                replicaId: -1,
                topics: [
                  {
                    name: "acl-t",
                    partitions: [
                      { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 },
                    ],
                  },
                ],
              }),
          },
          {
            name: "Fetch (READ topic)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.Fetch, 12, fetchBody(-1)),
          },
          {
            name: "OffsetForLeaderEpoch (DESCRIBE topic)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.OffsetForLeaderEpoch, 4, {
                replicaId: -1,
                topics: [
                  { topic: "acl-t", partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] },
                ],
              }),
          },
          {
            name: "DescribeProducers (READ topic)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.DescribeProducers, 0, { topics: [{ name: "acl-t", partitionIndexes: [0] }] }),
          },
          {
            name: "DeleteRecords (DELETE topic)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.DeleteRecords, 2, {
                timeoutMs: 5000,
                topics: [{ name: "acl-t", partitions: [{ partitionIndex: 0, offset: 0n }] }],
              }),
          },
          {
            name: "CreateTopics (CREATE on a prefixed pattern)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (_w, ctl) =>
              call(ctl, Apis.CreateTopics, 7, {
                timeoutMs: 10_000,
                topics: [
                  { name: "alice-new", numPartitions: 1, replicationFactor: 2, assignments: [], configs: [] },
                ],
              }),
          },
          {
            name: "CreatePartitions (ALTER topic)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (_w, ctl) =>
              call(ctl, Apis.CreatePartitions, 3, {
                timeoutMs: 10_000,
                validateOnly: true,
                topics: [{ name: "acl-t", count: 3, assignments: null }],
              }),
          },
          {
            name: "DeleteTopics (DELETE on a prefixed pattern)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (_w, ctl) =>
              call(ctl, Apis.DeleteTopics, 6, {
                timeoutMs: 10_000,
                topics: [{ name: "alice-new", topicId: ZERO_UUID }],
              }),
          },
          {
            name: "DescribeConfigs topic (DESCRIBE_CONFIGS, implied by ALTER_CONFIGS)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.DescribeConfigs, 4, {
                resources: [{ resourceType: 2, resourceName: "acl-t", configurationKeys: null }],
              }),
          },
          {
            name: "DescribeConfigs broker (DESCRIBE_CONFIGS cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.DescribeConfigs, 4, {
                resources: [{ resourceType: 4, resourceName: "0", configurationKeys: null }],
              }),
          },
          {
            name: "AlterConfigs topic (ALTER_CONFIGS)",
            denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.AlterConfigs, 2, {
                validateOnly: true,
                resources: [
                  {
                    resourceType: 2,
                    resourceName: "acl-t",
                    configs: [{ name: "retention.ms", value: "600000" }],
                  },
                ],
              }),
          },
          {
            name: "IncrementalAlterConfigs broker (ALTER_CONFIGS cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.IncrementalAlterConfigs, 1, {
                validateOnly: true,
                resources: [
                  {
                    resourceType: 4,
                    resourceName: "",
                    configs: [{ name: "log.cleaner.threads", configOperation: 0, value: "1" }],
                  },
                ],
              }),
          },
          {
            name: "FindCoordinator group (DESCRIBE group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.FindCoordinator, 4, { keyType: 0, coordinatorKeys: ["acl-m"] }),
          },
          {
            name: "FindCoordinator transaction (DESCRIBE transactional id)",
            denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.FindCoordinator, 4, { keyType: 1, coordinatorKeys: ["acl-tx"] }),
          },
          {
            name: "JoinGroup (READ group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.JoinGroup, 5, {
                groupId: "acl-m",
                sessionTimeoutMs: 10_000,
                rebalanceTimeoutMs: 10_000,
                memberId: "",
                protocolType: "consumer",
                protocols: [{ name: "range", metadata: Buffer.alloc(0) }],
              }),
          },
          {
            name: "SyncGroup (READ group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.SyncGroup, 3, {
                groupId: "acl-m",
                generationId: 1,
                memberId: "m",
                assignments: [],
              }),
          },
          {
            name: "Heartbeat (READ group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.Heartbeat, 3, { groupId: "acl-m", generationId: 1, memberId: "m" }),
          },
          {
            name: "LeaveGroup (READ group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.LeaveGroup, 3, {
                groupId: "acl-m",
                members: [{ memberId: "m", groupInstanceId: null, reason: null }],
              }),
          },
          {
            name: "OffsetCommit (READ group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.OffsetCommit, 8, {
                groupId: "acl-m",
                generationIdOrMemberEpoch: -1,
                memberId: "",
                topics: [
                  {
                    name: "acl-t",
                    partitions: [
                      {
                        partitionIndex: 0,
                        committedOffset: 0n,
                        committedLeaderEpoch: -1,
                        commitTimestamp: -1n,
                        committedMetadata: null,
                      },
                    ],
                  },
                ],
              }),
          },
          {
            name: "OffsetFetch (DESCRIBE group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.OffsetFetch, 8, {
                groups: [
                  {
                    groupId: "acl-m",
                    memberId: null,
                    memberEpoch: -1,
                    topics: [{ name: "acl-t", partitionIndexes: [0] }],
                  },
                ],
              }),
          },
          {
            name: "DescribeGroups (DESCRIBE group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.DescribeGroups, 5, { groups: ["acl-m"], includeAuthorizedOperations: true }),
          },
          {
            name: "OffsetDelete (DELETE group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.OffsetDelete, 0, {
                groupId: "acl-m",
                topics: [{ name: "acl-t", partitions: [{ partitionIndex: 0 }] }],
              }),
          },
          {
            name: "DeleteGroups (DELETE group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.DeleteGroups, 2, { groupsNames: ["acl-m"] }),
          },
          {
            name: "ConsumerGroupHeartbeat (READ group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.ConsumerGroupHeartbeat, 0, {
                groupId: "acl-m",
                memberId: "",
                memberEpoch: 0,
                rebalanceTimeoutMs: 10_000,
                subscribedTopicNames: ["acl-t"],
                topicPartitions: [],
              }),
          },
          {
            name: "ConsumerGroupDescribe (DESCRIBE group)",
            denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.ConsumerGroupDescribe, 0, { groupIds: ["acl-m"] }),
          },
          {
            name: "InitProducerId transactional (WRITE transactional id)",
            denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.InitProducerId, 4, {
                transactionalId: "acl-tx",
                transactionTimeoutMs: 10_000,
                producerId: -1n,
                producerEpoch: -1,
              }),
          },
          {
            name: "InitProducerId idempotent (IDEMPOTENT_WRITE cluster or WRITE on a topic)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.InitProducerId, 4, {
                transactionalId: null,
                transactionTimeoutMs: 10_000,
                producerId: -1n,
                producerEpoch: -1,
              }),
          },
          {
            name: "AddPartitionsToTxn (WRITE transactional id)",
            denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.AddPartitionsToTxn, 3, {
                v3AndBelowTransactionalId: "acl-tx",
                v3AndBelowProducerId: 1n,
                v3AndBelowProducerEpoch: 0,
                v3AndBelowTopics: tp,
              }),
          },
          {
            name: "AddOffsetsToTxn (WRITE transactional id)",
            denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.AddOffsetsToTxn, 3, {
                transactionalId: "acl-tx",
                producerId: 1n,
                producerEpoch: 0,
                groupId: "acl-m",
              }),
          },
          {
            name: "EndTxn (WRITE transactional id)",
            denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.EndTxn, 3, {
                transactionalId: "acl-tx",
                producerId: 1n,
                producerEpoch: 0,
                committed: true,
              }),
          },
          {
            name: "TxnOffsetCommit (WRITE transactional id)",
            denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.TxnOffsetCommit, 3, {
                transactionalId: "acl-tx",
                groupId: "acl-m",
                producerId: 1n,
                producerEpoch: 0,
                generationId: -1,
                memberId: "",
                topics: [
                  {
                    name: "acl-t",
                    partitions: [
                      {
                        partitionIndex: 0,
                        committedOffset: 0n,
                        committedLeaderEpoch: -1,
                        committedMetadata: null,
                      },
                    ],
                  },
                ],
              }),
          },
          {
            name: "DescribeTransactions (DESCRIBE transactional id)",
            denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.DescribeTransactions, 0, { transactionalIds: ["acl-tx"] }),
          },
          {
            name: "DescribeLogDirs (DESCRIBE cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) => call(w, Apis.DescribeLogDirs, 4, { topics: [] }),
          },
          {
            name: "AlterReplicaLogDirs (ALTER cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.AlterReplicaLogDirs, 2, {
                dirs: [{ path: "/nonexistent-log-dir", topics: [{ name: "acl-t", partitions: [0] }] }],
              }),
          },
          {
            name: "ListPartitionReassignments (DESCRIBE cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (_w, ctl) =>
              call(ctl, Apis.ListPartitionReassignments, 0, { timeoutMs: 5000, topics: null }),
          },
          {
            name: "AlterPartitionReassignments (ALTER cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (_w, ctl) =>
              call(ctl, Apis.AlterPartitionReassignments, 0, { timeoutMs: 5000, topics: [] }),
          },
          {
            name: "ElectLeaders (ALTER cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (_w, ctl) =>
              call(ctl, Apis.ElectLeaders, 2, { electionType: 0, topicPartitions: [], timeoutMs: 5000 }),
          },
          {
            name: "ElectLeaders v0 with partitions (ALTER cluster, the error in each partition)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (_w, ctl) =>
              call(ctl, Apis.ElectLeaders, 0, {
                topicPartitions: [{ topic: "acl-t", partitions: [0] }],
                timeoutMs: 5000,
              }),
          },
          {
            name: "DescribeAcls (DESCRIBE cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.DescribeAcls, 3, {
                resourceTypeFilter: 1,
                resourceNameFilter: null,
                patternTypeFilter: 1,
                principalFilter: null,
                hostFilter: null,
                operation: 1,
                permissionType: 1,
              }),
          },
          {
            name: "CreateAcls (ALTER cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.CreateAcls, 3, {
                creations: [
                  {
                    resourceType: 2,
                    resourceName: "acl-extra",
                    resourcePatternType: 3,
                    principal: "User:carol",
                    host: "*",
                    operation: 3,
                    permissionType: 3,
                  },
                ],
              }),
          },
          {
            name: "DeleteAcls (ALTER cluster)",
            denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            send: (w) =>
              call(w, Apis.DeleteAcls, 3, {
                filters: [
                  {
                    resourceTypeFilter: 2,
                    resourceNameFilter: "acl-extra",
                    patternTypeFilter: 3,
                    principalFilter: null,
                    hostFilter: null,
                    operation: 1,
                    permissionType: 1,
                  },
                ],
              }),
          },
        ];
        const failures: string[] = [];
        for (const row of rows) {
          // bob first: the rows that change something (CreateTopics, DeleteTopics) then run for alice.
          const bobCodes = errorCodes(await row.send(bob, bobCtl));
          const aliceCodes = errorCodes(await row.send(alice, aliceCtl));
          if (!bobCodes.has(row.denied))
            failures.push(`${row.name}: bob got ${[...bobCodes]}, expected ${row.denied}`);
          const aliceAuth = [...aliceCodes].filter((x) => AUTH_ERRORS.has(x));
          if (aliceAuth.length > 0) failures.push(`${row.name}: alice got authorization error ${aliceAuth}`);
        }
        assert.deepEqual(failures, []);
      },
    );
  });

  test("kcat, kafka-python and confluent-kafka: allowed with the ACLs, Kafka's errors without", async () => {
    await withLogTails(() => cluster, realClients);
  });

  test("prefixed ACLs, User:*, deny over allow, super users (kcat)", async () => {
    await withLogTails(() => cluster, patternsAndSuperUsers);
  });

  test("an ACL added or removed through broker 0 applies on broker 1 within seconds", async (t) => {
    await withLogTails(
      () => cluster,
      () => propagation((m) => t.diagnostic(m)),
    );
  });

  test("replication keeps working with the authorizer: the brokers are super users", async () => {
    await withLogTails(() => cluster, replication);
  });

  test("authorized operations from the ACLs; replica fetches and inter-broker APIs need CLUSTER_ACTION", async () => {
    await withLogTails(() => cluster, authorizedOperationsAndClusterAction);
  });
});

async function authorizedOperationsAndClusterAction(): Promise<void> {
  const alice = await wire("alice");
  const bob = await wire("bob");
  const admin = await wire("admin");
  // Metadata: alice holds every topic operation on acl-t (3576 = READ…ALTER_CONFIGS bits); bob does
  // not see acl-t among all topics, only what User:* may describe.
  const md = await call(alice, Apis.Metadata, 10, {
    topics: [{ topicId: ZERO_UUID, name: "acl-t" }],
    includeTopicAuthorizedOperations: true,
    includeClusterAuthorizedOperations: true,
  });
  assert.equal(md.topics[0].topicAuthorizedOperations, 3576);
  assert.equal(md.clusterAuthorizedOperations, (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11));
  const all = await call(bob, Apis.Metadata, 12, { topics: null });
  // (bob may describe the acl-pub-* topics through User:* on the prefix, nothing else.)
  assert.deepEqual(all.topics.map((t) => t.name).sort(), ["acl-pub-open", "acl-pub-secret"]);
  const adminAll = await call(admin, Apis.Metadata, 12, { topics: null });
  assert.ok(adminAll.topics.some((t) => t.name === "acl-t"));
  // DescribeCluster: alice's cluster operations, none for bob, all for the super user.
  for (const [w, bits] of [
    [alice, (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11)],
    [bob, 0],
    [admin, (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)],
  ] as const) {
    const dc = await call(w, Apis.DescribeCluster, 1, {
      includeClusterAuthorizedOperations: true,
      endpointType: 1,
    });
    assert.equal(dc.clusterAuthorizedOperations, bits);
  }
  // DescribeGroups: READ, DESCRIBE, DELETE on acl-g for alice.
  const dg = await call(alice, Apis.DescribeGroups, 5, {
    groups: ["acl-g"],
    includeAuthorizedOperations: true,
  });
  assert.equal(dg.groups[0].authorizedOperations, (1 << 3) | (1 << 6) | (1 << 8));
  // A client's Fetch with a replica id (CVE-2018-1288): refused even though alice may READ the topic.
  const asReplica = await call(alice, Apis.Fetch, 12, fetchBody(1));
  assert.deepEqual([...errorCodes(asReplica.responses)], [ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
  // Inter-broker APIs from a client: CLUSTER_AUTHORIZATION_FAILED.
  const interBroker: Array<[string, (w: WireClient) => Promise<unknown>]> = [
    [
      "LeaderAndIsr",
      (w) => call(w, Apis.LeaderAndIsr, 7, { controllerId: 0, controllerEpoch: 1, brokerEpoch: 0n }),
    ],
    [
      "StopReplica",
      (w) => call(w, Apis.StopReplica, 4, { controllerId: 0, controllerEpoch: 1, brokerEpoch: 0n }),
    ],
    [
      "UpdateMetadata",
      (w) => call(w, Apis.UpdateMetadata, 8, { controllerId: 0, controllerEpoch: 1, brokerEpoch: 0n }),
    ],
    ["ControlledShutdown", (w) => call(w, Apis.ControlledShutdown, 3, { brokerId: 1, brokerEpoch: 0n })],
    ["AlterPartition", (w) => call(w, Apis.AlterPartition, 1, { brokerId: 1, brokerEpoch: 0n, topics: [] })],
    [
      "WriteTxnMarkers",
      (w) =>
        call(w, Apis.WriteTxnMarkers, 1, {
          markers: [
            {
              producerId: 1n,
              producerEpoch: 0,
              transactionResult: false,
              topics: [{ name: "acl-t", partitionIndexes: [0] }],
              coordinatorEpoch: 0,
            },
          ],
        }),
    ],
    [
      "OffsetForLeaderEpoch from a replica",
      (w) =>
        call(w, Apis.OffsetForLeaderEpoch, 4, {
          replicaId: 1,
          topics: [
            { topic: "acl-t", partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] },
          ],
        }),
    ],
  ];
  for (const [name, send] of interBroker)
    assert.deepEqual(
      [...errorCodes(await send(await wire("alice")))],
      [ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
      name,
    );
}

function fetchBody(replicaId: number) {
  return {
    replicaId,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic: "acl-t",
        topicId: ZERO_UUID,
        partitions: [
          {
            partition: 0,
            currentLeaderEpoch: -1,
            fetchOffset: 0n,
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: 1 << 20,
            replicaDirectoryId: ZERO_UUID,
          },
        ],
      },
    ],
    forgottenTopicsData: [],
  };
}

/** kcat with `user`'s SASL/PLAIN credentials on broker `broker`. */
async function kcat(user: string, args: readonly string[], input?: string) {
  return runCommand(KCAT, [...kcatSasl(user), ...args], { input, timeoutMs: 30_000 });
}

async function realClients(): Promise<void> {
  // kcat: alice writes and reads acl-t; bob is refused both.
  const produced = await kcat("alice", ["-P", "-t", "acl-t", "-p", "0"], "k1\nk2\n");
  assert.equal(produced.code, 0, produced.stderr);
  const read = await kcat("alice", [
    "-C",
    "-t",
    "acl-t",
    "-p",
    "0",
    "-o",
    "beginning",
    "-c",
    "2",
    "-e",
    "-q",
  ]);
  assert.equal(read.code, 0, read.stderr);
  assert.deepEqual(read.stdout.trim().split("\n"), ["k1", "k2"]);
  const bobProduce = await kcat("bob", ["-P", "-t", "acl-t", "-p", "0"], "nope\n");
  assert.notEqual(bobProduce.code, 0);
  assert.match(bobProduce.stderr, /Topic authorization failed/);
  const bobRead = await kcat("bob", ["-C", "-t", "acl-t", "-p", "0", "-o", "beginning", "-c", "1", "-e"]);
  assert.notEqual(bobRead.code, 0);
  assert.match(bobRead.stderr, /Topic authorization failed/);

  // kafka-python: alice consumes in group acl-g and commits; bob (READ on acl-pub-* through User:*, no
  // group ACL) gets GroupAuthorizationFailedError for his group.
  const kp = `
import sys, json
from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError
port = sys.argv[1]
def consumer(user, group, topic):
    return KafkaConsumer(topic, group_id=group, bootstrap_servers="127.0.0.1:" + port, security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN", sasl_plain_username=user, sasl_plain_password=user + "-secret",
        auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=15000)
out = {}
c = consumer("alice", "acl-g", "acl-t")
values = sorted(m.value.decode() for m in c)
c.commit()
out["alice"] = {"values": values, "committed": c.committed(TopicPartition("acl-t", 0))}
c.close()
try:
    c = consumer("bob", "bob-g", "acl-pub-open")
    list(c)
    out["bob"] = "no error"
except KafkaError as e:
    out["bob"] = type(e).__name__
print(json.dumps(out))
`;
  const kpRun = await runCommand(PYTHON, ["-c", kp, String(saslPort(0))], { timeoutMs: 90_000 });
  assert.equal(kpRun.code, 0, kpRun.stderr);
  const kpOut = JSON.parse(kpRun.stdout.trim().split("\n").pop() ?? "{}");
  assert.deepEqual(kpOut.alice.values, ["k1", "k2"]);
  assert.equal(kpOut.alice.committed, 2);
  assert.equal(kpOut.bob, "GroupAuthorizationFailedError");

  // confluent-kafka: admin and a transactional producer.
  const ck = `
import sys, json
from confluent_kafka import Producer, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource
port = sys.argv[1]
def conf(user):
    return {"bootstrap.servers": "127.0.0.1:" + port, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN",
            "sasl.username": user, "sasl.password": user + "-secret"}
def outcome(f):
    try:
        f.result(timeout=20)
        return "NONE"
    except KafkaException as e:
        return e.args[0].name()
out = {}
for user in ["bob", "alice"]:
    a = AdminClient(conf(user))
    out[user + "-create"] = outcome(a.create_topics([NewTopic("alice-ck", 1, 1)])["alice-ck"])
    out[user + "-describe-configs"] = outcome(a.describe_configs([ConfigResource("topic", "acl-t")])[ConfigResource("topic", "acl-t")])
    out[user + "-delete"] = outcome(a.delete_topics(["alice-ck"], operation_timeout=10)["alice-ck"])
    p = Producer(dict(conf(user), **{"transactional.id": "acl-tx"}))
    try:
        p.init_transactions(20)
        p.begin_transaction()
        p.produce("acl-t", b"txn-" + user.encode(), partition=1)
        p.commit_transaction(20)
        out[user + "-txn"] = "NONE"
    except KafkaException as e:
        out[user + "-txn"] = e.args[0].name()
print(json.dumps(out))
`;
  const ckRun = await runCommand(PYTHON, ["-c", ck, String(saslPort(0))], { timeoutMs: 120_000 });
  assert.equal(ckRun.code, 0, ckRun.stderr);
  assert.deepEqual(JSON.parse(ckRun.stdout.trim().split("\n").pop() ?? "{}"), {
    "bob-create": "TOPIC_AUTHORIZATION_FAILED",
    "bob-describe-configs": "TOPIC_AUTHORIZATION_FAILED",
    "bob-delete": "TOPIC_AUTHORIZATION_FAILED",
    "bob-txn": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    "alice-create": "NONE",
    "alice-describe-configs": "NONE",
    "alice-delete": "NONE",
    "alice-txn": "NONE",
  });
}

async function patternsAndSuperUsers(): Promise<void> {
  await acls([
    "--add",
    "--allow-principal",
    "User:*",
    "--operation",
    "Read",
    "--operation",
    "Describe",
    "--topic",
    "acl-pub-",
    "--resource-pattern-type",
    "prefixed",
  ]);
  await acls(["--add", "--deny-principal", "User:bob", "--operation", "Read", "--topic", "acl-pub-secret"]);
  // Both brokers have them once bob is refused acl-pub-secret and may read acl-pub-open.
  for (const topic of ["acl-pub-open", "acl-pub-secret", "acl-free"]) {
    const r = await kcat("admin", ["-P", "-t", topic], `${topic}-v\n`);
    assert.equal(r.code, 0, `super user writes ${topic} without any ACL: ${r.stderr}`);
  }
  const readAs = (user: string, topic: string) =>
    kcat(user, ["-C", "-t", topic, "-o", "beginning", "-c", "1", "-e", "-q"]);
  await c().waitFor("the deny ACL applied", 10_000, async () => {
    const r = await readAs("bob", "acl-pub-secret");
    return r.code !== 0 && /Topic authorization failed/.test(r.stderr) ? true : undefined;
  });
  const open = await readAs("bob", "acl-pub-open");
  assert.equal(open.code, 0, `User:* on the prefix: ${open.stderr}`);
  assert.equal(open.stdout.trim(), "acl-pub-open-v");
  const secretAlice = await readAs("alice", "acl-pub-secret");
  assert.equal(secretAlice.code, 0, `the deny names bob only: ${secretAlice.stderr}`);
  assert.equal(secretAlice.stdout.trim(), "acl-pub-secret-v");
  const free = await readAs("bob", "acl-free");
  assert.notEqual(free.code, 0, "no ACL: denied (allow.everyone.if.no.acl.found=false)");
  const adminFree = await readAs("admin", "acl-free");
  assert.equal(adminFree.code, 0, adminFree.stderr);
  // The denials are logged as Kafka's authorizer logger does.
  const log = c()
    .brokers.map((b) => b.stdout)
    .join("\n");
  assert.match(
    log,
    /INFO Principal = User:bob is Denied Operation = Read from host = 127\.0\.0\.1 on resource = Topic:LITERAL:acl-pub-secret for request = Fetch with resourceRefCount = 1 \(kafka\.authorizer\.logger\)/,
  );
}

async function propagation(note: (m: string) => void): Promise<void> {
  const bob1 = await wire("bob", 1);
  const describeLate = async () =>
    (
      await call(bob1, Apis.Metadata, 12, {
        topics: [{ topicId: ZERO_UUID, name: "acl-late" }],
        allowAutoTopicCreation: false,
      })
    ).topics[0].errorCode;
  assert.equal(await describeLate(), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  let start = Date.now();
  await acls(["--add", "--allow-principal", "User:bob", "--operation", "Describe", "--topic", "acl-late"], 0);
  await c().waitFor("broker 1 applies the new ACL", 10_000, async () =>
    (await describeLate()) === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ? true : undefined,
  );
  note(`added through broker 0, applied on broker 1 after ${Date.now() - start} ms (tool run included)`);
  start = Date.now();
  await acls(
    [
      "--remove",
      "--force",
      "--allow-principal",
      "User:bob",
      "--operation",
      "Describe",
      "--topic",
      "acl-late",
    ],
    0,
  );
  await c().waitFor("broker 1 applies the removal", 10_000, async () =>
    (await describeLate()) === ErrorCode.TOPIC_AUTHORIZATION_FAILED ? true : undefined,
  );
  note(`removed through broker 0, applied on broker 1 after ${Date.now() - start} ms (tool run included)`);
  assert.equal(
    await c().znode("/kafka-acl/Topic/acl-late"),
    undefined,
    "the emptied resource's znode is deleted",
  );
}

async function replication(): Promise<void> {
  // acl-t has 2 replicas; alice's records (kcat, acks=all) are on both, and both stay in the ISR.
  await c().waitFor("acl-t fully replicated", 20_000, async () => {
    const parts = await c().describe("acl-t");
    if (!parts.every((p) => p.isr.length === 2)) return undefined;
    const logs = await Promise.all([0, 1].map((b) => c().partitionLog(b, "acl-t", 0)));
    return logs[0].size >= 2 && [...logs[0]].every(([o, v]) => logs[1].get(o) === v) ? true : undefined;
  });
  for (const b of c().brokers) assert.doesNotMatch(b.stdout, /Denied Operation = ClusterAction/);
}
