// `tributary log-dirs` (kafka-log-dirs.sh, Kafka's LogDirsCommand): --describe queries DescribeLogDirs
// on the brokers of --broker-list (all by default) and prints `Querying brokers for log directories
// information`, `Received log directory information from brokers 0,1` and the JSON document
// `{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"t-0","size":N,"offsetLag":0,
// "isFuture":false}],"error":null,"logDir":…}]}],"version":1}`, optionally limited to --topic-list. The
// keys come in the order Kafka's tool prints them: it serialises Java HashMaps, whose iteration order
// follows the keys' hash buckets (brokers before version, partitions before error before logDir).

import type { AdminClientOptions } from "../../client/admin/admin-client.js";
import { kafkaExceptionClass } from "../../client/errors.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";

export const LOG_DIRS_SPEC: ToolSpec = {
  name: "log-dirs",
  description: "This tool helps to query log directory usage on the specified brokers.",
  options: [
    bootstrapServerOption(
      "REQUIRED: the server(s) to use for bootstrapping",
      "The server(s) to use for bootstrapping",
    ),
    {
      name: "broker-list",
      description:
        'The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be queried if no broker list is specified',
      arg: { type: "String", describedAs: "Broker list" },
      defaultValue: "",
    },
    commandConfigOption("Admin client property file"),
    { name: "describe", description: "Describe the specified log directories on the specified brokers." },
    {
      name: "topic-list",
      description:
        'The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be queried if no topic list is specified',
      arg: { type: "String", describedAs: "Topic list" },
      defaultValue: "",
    },
  ],
};

export function runLogDirs(argv: string[]): Promise<number> {
  return runTool(LOG_DIRS_SPEC, argv, logDirs);
}

function splitList(v: string | undefined): string[] {
  return (v ?? "").split(",").filter((x) => x !== "");
}

async function logDirs(args: ParsedArgs): Promise<number> {
  checkRequired(args, "bootstrap-server", "describe");
  const topics = new Set(splitList(args.value("topic-list")));
  const input = [
    ...new Set(
      splitList(args.value("broker-list")).map((b) => {
        if (!/^[+-]?\d+$/.test(b.trim())) throw new UsageError(`For input string: "${b}"`);
        return Number(b.trim());
      }),
    ),
  ];
  const clientId = (o: AdminClientOptions): AdminClientOptions => ({
    ...o,
    clientId: o.clientId === "adminclient-1" ? "log-dirs-tool" : o.clientId,
  });
  return withAdminClient(
    args,
    async (admin) => {
      const cluster = (await admin.describeCluster()).brokers.map((b) => b.id);
      const missing = input.filter((b) => !cluster.includes(b));
      if (missing.length > 0)
        throw new UsageError(
          `ERROR: The given brokers do not exist from --broker-list: ${missing.join(",")}. Current existent brokers: ${cluster.join(",")}`,
        );
      const brokers = input.length > 0 ? input : cluster;
      process.stdout.write("Querying brokers for log directories information\n");
      const described = await admin.describeLogDirs(brokers);
      const failed = described.find((b) => b.error);
      if (failed?.error) throw failed.error;
      process.stdout.write(`Received log directory information from brokers ${brokers.join(",")}\n`);
      const doc = {
        brokers: described.map((b) => ({
          broker: b.brokerId,
          logDirs: b.logDirs.map((d) => ({
            partitions: d.replicas
              .filter((r) => topics.size === 0 || topics.has(r.topic))
              .map((r) => ({
                partition: `${r.topic}-${r.partition}`,
                size: Number(r.size),
                offsetLag: Number(r.offsetLag),
                isFuture: r.isFuture,
              })),
            error: d.error ? kafkaExceptionClass(d.error) : null,
            logDir: d.path,
          })),
        })),
        version: 1,
      };
      process.stdout.write(`${JSON.stringify(doc)}\n`);
      return 0;
    },
    clientId,
  );
}
