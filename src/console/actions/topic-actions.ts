// Topic actions of the console (each behind a confirmation in the page and recorded in the audit log):
// create a topic, delete it, add partitions, change its configs (IncrementalAlterConfigs SET/DELETE);
// and reading its configs for the topic page. Kafka's per-resource errors come back as one line (409
// for "already exists", 400 for an invalid request, 502 otherwise).

import type { AdminClient } from "../../client/admin/admin-client.js";
import { CONFIG_SOURCE_NAMES } from "../../client/admin/admin-types.js";
import type { KafkaClientError } from "../../client/errors.js";
import { HttpError } from "../http/router.js";
import { type Body, int, str, stringList, stringMap } from "./inputs.js";

function fail(e: KafkaClientError | undefined): void {
  if (!e) return;
  const status = /EXISTS/.test(e.errorName)
    ? 409
    : /INVALID|POLICY|UNKNOWN_TOPIC/.test(e.errorName)
      ? 400
      : 502;
  throw new HttpError(status, e.message);
}

export async function createTopic(admin: AdminClient, b: Body) {
  const name = str(b, "name");
  const partitions = int(b, "partitions", 1, 100_000, true) ?? -1;
  const replicationFactor = int(b, "replicationFactor", 1, 32, true) ?? -1;
  const configs = stringMap(b, "configs");
  const [r] = await admin.createTopics([{ name, numPartitions: partitions, replicationFactor, configs }]);
  fail(r.error);
  return { name, topicId: r.topicId, partitions: r.numPartitions, replicationFactor: r.replicationFactor };
}

export async function deleteTopic(admin: AdminClient, topic: string) {
  const [r] = await admin.deleteTopics([topic]);
  fail(r.error);
  return { deleted: topic };
}

export async function addPartitions(admin: AdminClient, topic: string, b: Body) {
  const totalCount = int(b, "totalCount", 1, 100_000);
  const [r] = await admin.createPartitions([{ topic, totalCount }]);
  fail(r.error);
  return { topic, partitions: totalCount };
}

export async function alterTopicConfigs(admin: AdminClient, topic: string, b: Body) {
  const set = stringMap(b, "set");
  const remove = stringList(b, "delete");
  if (Object.keys(set).length === 0 && remove.length === 0)
    throw new HttpError(400, "set or delete: nothing to change");
  const ops = [
    ...Object.entries(set).map(([name, value]) => ({ name, op: "SET" as const, value })),
    ...remove.map((name) => ({ name, op: "DELETE" as const })),
  ];
  const [r] = await admin.incrementalAlterConfigs([{ resource: { type: "topic", name: topic }, ops }]);
  fail(r.error);
  return { topic, set, deleted: remove };
}

export async function topicConfigs(admin: AdminClient, topic: string) {
  const [r] = await admin.describeConfigs([{ type: "topic", name: topic }]);
  fail(r.error);
  return r.entries
    .map((e) => ({
      name: e.name,
      value: e.isSensitive ? null : e.value,
      source: CONFIG_SOURCE_NAMES[e.source] ?? String(e.source),
      isDefault: e.isDefault,
      readOnly: e.isReadOnly,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}
