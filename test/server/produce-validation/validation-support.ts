// Test support for the produce-validation tests: raw Produce / Fetch / ListOffsets / Metadata /
// DescribeLogDirs requests over a real socket (WireClient, the generated codecs), the `tributary` CLI of
// the build under test (dump-log), and a confluent-kafka (librdkafka) producer run through /usr/bin/python3.

import { Apis } from "../../../src/protocol/generated/api-table.js";
import { defaultDescribeLogDirsRequest } from "../../../src/protocol/generated/messages/DescribeLogDirsRequest.js";
import type { DescribeLogDirsResponse } from "../../../src/protocol/generated/messages/DescribeLogDirsResponse.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  defaultFetchTopic,
} from "../../../src/protocol/generated/messages/FetchRequest.js";
import type { FetchResponse } from "../../../src/protocol/generated/messages/FetchResponse.js";
import {
  defaultListOffsetsPartition,
  defaultListOffsetsRequest,
  defaultListOffsetsTopic,
} from "../../../src/protocol/generated/messages/ListOffsetsRequest.js";
import type { ListOffsetsResponse } from "../../../src/protocol/generated/messages/ListOffsetsResponse.js";
import {
  defaultMetadataRequest,
  defaultMetadataRequestTopic,
} from "../../../src/protocol/generated/messages/MetadataRequest.js";
import type { MetadataResponse } from "../../../src/protocol/generated/messages/MetadataResponse.js";
import {
  defaultPartitionProduceData,
  defaultProduceRequest,
  defaultTopicProduceData,
} from "../../../src/protocol/generated/messages/ProduceRequest.js";
import type { PartitionProduceResponse } from "../../../src/protocol/generated/messages/ProduceResponse.js";
import { type CommandResult, runCommand } from "../../support/broker-harness.js";
import { runTributary } from "../../support/tributary-cli.js";
import { WireClient } from "../wire-client.js";

export const PYTHON = "/usr/bin/python3";
/** Runs `tributary <args>` from the build under test. */
export function tributary(args: readonly string[], timeoutMs = 30_000): Promise<CommandResult> {
  return runTributary(args, { timeoutMs });
}

/** Produce v9 of one batch to one partition; the partition's response. */
export async function produceRaw(
  port: number,
  topic: string,
  partition: number,
  records: Buffer,
  version = 9,
): Promise<PartitionProduceResponse> {
  const c = await WireClient.connect(port);
  try {
    const res = await c.request(Apis.Produce, version, {
      ...defaultProduceRequest(),
      acks: -1,
      timeoutMs: 10_000,
      topicData: [
        {
          ...defaultTopicProduceData(),
          name: topic,
          partitionData: [{ ...defaultPartitionProduceData(), index: partition, records }],
        },
      ],
    });
    return res.responses[0].partitionResponses[0];
  } finally {
    c.close();
  }
}

/** Fetch v12 from offset 0 of one partition: its error code and record bytes. */
export async function fetchRaw(
  port: number,
  topic: string,
  partition: number,
): Promise<{ errorCode: number; records: Buffer | null }> {
  const c = await WireClient.connect(port);
  try {
    const res: FetchResponse = await c.request(Apis.Fetch, 12, {
      ...defaultFetchRequest(),
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      topics: [
        {
          ...defaultFetchTopic(),
          topic,
          partitions: [
            { ...defaultFetchPartition(), partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 },
          ],
        },
      ],
    });
    const p = res.responses[0].partitions[0];
    return { errorCode: p.errorCode, records: p.records };
  } finally {
    c.close();
  }
}

/** ListOffsets v7 latest of one partition: error code and offset. */
export async function listLatestRaw(
  port: number,
  topic: string,
  partition: number,
): Promise<{ errorCode: number; offset: bigint }> {
  const c = await WireClient.connect(port);
  try {
    const res: ListOffsetsResponse = await c.request(Apis.ListOffsets, 7, {
      ...defaultListOffsetsRequest(),
      replicaId: -1,
      topics: [
        {
          ...defaultListOffsetsTopic(),
          name: topic,
          partitions: [{ ...defaultListOffsetsPartition(), partitionIndex: partition, timestamp: -1n }],
        },
      ],
    });
    const p = res.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: p.offset };
  } finally {
    c.close();
  }
}

/** Metadata v12 of one topic. */
export async function metadataRaw(port: number, topic: string): Promise<MetadataResponse> {
  const c = await WireClient.connect(port);
  try {
    return await c.request(Apis.Metadata, 12, {
      ...defaultMetadataRequest(),
      allowAutoTopicCreation: false,
      topics: [{ ...defaultMetadataRequestTopic(), name: topic }],
    });
  } finally {
    c.close();
  }
}

/** DescribeLogDirs v4 of every dir. */
export async function describeLogDirsRaw(port: number): Promise<DescribeLogDirsResponse> {
  const c = await WireClient.connect(port);
  try {
    return await c.request(Apis.DescribeLogDirs, 4, { ...defaultDescribeLogDirsRequest(), topics: null });
  } finally {
    c.close();
  }
}

/** The `compresscodec:` of every batch line `tributary dump-log --files <log>` prints. */
export async function dumpLogCodecs(logFile: string): Promise<string[]> {
  const r = await tributary(["dump-log", "--files", logFile]);
  if (r.code !== 0) throw new Error(`dump-log failed: ${r.stderr}`);
  return [...r.stdout.matchAll(/compresscodec: (\S+)/g)].map((m) => m[1]);
}

/**
 * Produces with confluent-kafka (librdkafka) and returns each message's delivery outcome: the error name
 * (e.g. "INVALID_TIMESTAMP") or null. `messages` carry an optional timestamp (ms).
 */
export async function confluentProduce(
  bootstrap: string,
  topic: string,
  config: Record<string, string | number>,
  messages: ReadonlyArray<{ key?: string; value: string; timestamp?: number; partition?: number }>,
): Promise<Array<string | null>> {
  const script = `
import json, sys
from confluent_kafka import Producer
bootstrap, topic, config, messages = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
config["bootstrap.servers"] = bootstrap
p = Producer(config)
out = [None] * len(messages)
def report(i):
    def cb(err, msg):
        out[i] = None if err is None else err.name()
    return cb
for i, m in enumerate(messages):
    kw = {}
    if "timestamp" in m: kw["timestamp"] = m["timestamp"]
    if "partition" in m: kw["partition"] = m["partition"]
    p.produce(topic, value=m["value"], key=m.get("key"), on_delivery=report(i), **kw)
p.flush(30)
print(json.dumps(out))
`;
  const r = await runCommand(
    PYTHON,
    ["-c", script, bootstrap, topic, JSON.stringify(config), JSON.stringify(messages)],
    { timeoutMs: 60_000 },
  );
  if (r.code !== 0) throw new Error(`confluent-kafka producer failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}
