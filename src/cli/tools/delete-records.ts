// `tributary delete-records` (kafka-delete-records.sh, Kafka's DeleteRecordsCommand): deletes the
// records of each partition in --offset-json-file before the given offset and prints
// `Executing records delete operation`, `Records delete operation completed:` and one
// `partition: t-0\tlow_watermark: N` (or `partition: t-0\terror: <exception>: <message>`) line each; exit 1
// when any partition failed.

import { kafkaExceptionClass } from "../../client/errors.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec } from "../args.js";
import { readJsonFile } from "../json-input.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";
import { offsetsFromJson } from "./delete-records-json.js";

export const DELETE_RECORDS_SPEC: ToolSpec = {
  name: "delete-records",
  description: "This tool helps to delete records of the given partitions down to the specified offset.",
  options: [
    bootstrapServerOption("REQUIRED: The server to connect to.", "server(s) to use for bootstrapping"),
    commandConfigOption(
      "command config property file path",
      "A property file containing configs to be passed to Admin Client.",
    ),
    {
      name: "offset-json-file",
      description:
        'REQUIRED: The JSON file with offset per partition. The format to use is:\n{"partitions":\n  [{"topic": "foo", "partition": 1, "offset": 1}],\n "version":1\n}',
      arg: { type: "String", describedAs: "Offset json file path" },
    },
  ],
};

export function runDeleteRecords(argv: string[]): Promise<number> {
  return runTool(DELETE_RECORDS_SPEC, argv, deleteRecords);
}

async function deleteRecords(args: ParsedArgs): Promise<number> {
  checkRequired(args, "bootstrap-server", "offset-json-file");
  const file = args.value("offset-json-file")!;
  const requests = offsetsFromJson(readJsonFile(file));
  return withAdminClient(args, async (admin) => {
    process.stdout.write("Executing records delete operation\n");
    const results = await admin.deleteRecords(requests);
    const out = ["Records delete operation completed:"];
    for (const r of results) {
      out.push(
        r.error
          ? `partition: ${r.topic}-${r.partition}\terror: ${kafkaExceptionClass(r.error)}: ${r.error.message}`
          : `partition: ${r.topic}-${r.partition}\tlow_watermark: ${r.lowWatermark}`,
      );
    }
    process.stdout.write(`${out.join("\n")}\n`);
    // A partition that could not be deleted (past its end, unknown, …) is a failure of the command.
    return results.some((r) => r.error) ? 1 : 0;
  });
}
