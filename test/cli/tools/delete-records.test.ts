// `tributary delete-records` end to end: the real executable against a real broker with Kafka's
// offset JSON file, output compared with DeleteRecordsCommand's lines, the result read back with kcat
// (records before the offset are gone), and bad JSON files rejected with one line naming the JSON path.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  type CommandResult,
  describeResult,
  readWithKcat,
  runCommand,
} from "../../support/broker-harness.js";
import { cliToolFixture, lines, tributary } from "../../support/cli-tool-fixture.js";

let files = 0;

/** Writes `json` to a file and runs delete-records on it. */
function deleteRecords(json: string): Promise<CommandResult> {
  const file = join(fx.broker.root, `offsets-${files++}.json`);
  writeFileSync(file, json);
  return tributary("delete-records", "--bootstrap-server", fx.broker.bootstrap, "--offset-json-file", file);
}

const fx = cliToolFixture({
  name: "tributary-delete-records-tool",
  admin: true,
  setup: async () => {
    await fx.createTopics([{ name: "dr", partitions: 2 }]);
    for (const p of [0, 1]) {
      const input = Array.from({ length: 5 }, (_, i) => `p${p}-m${i}`).join("\n");
      const k = await runCommand(
        "/usr/bin/kcat",
        ["-b", fx.broker.bootstrap, "-P", "-t", "dr", "-p", String(p)],
        {
          input,
        },
      );
      assert.equal(k.code, 0, describeResult("kcat -P", k));
    }
  },
});

describe("tributary delete-records", () => {
  test("deletes records before each offset and prints DeleteRecordsCommand's lines; a partition past its end fails the command", async () => {
    const r = await deleteRecords(
      JSON.stringify({
        partitions: [
          { topic: "dr", partition: 0, offset: 3 },
          { topic: "dr", partition: 1, offset: 9 },
        ],
        version: 1,
      }),
    );
    assert.equal(r.code, 1, describeResult("delete-records", r));
    assert.equal(r.stderr, "");
    assert.deepEqual(lines(r.stdout), [
      "Executing records delete operation",
      "Records delete operation completed:",
      "partition: dr-0\tlow_watermark: 3",
      "partition: dr-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the range of offsets maintained by the server.",
    ]);
    const left = await readWithKcat(fx.broker.bootstrap, "dr");
    assert.deepEqual(
      left.filter((m) => m.partition === 0).map((m) => [m.offset, m.value]),
      [
        [3, "p0-m3"],
        [4, "p0-m4"],
      ],
    );
    assert.equal(left.filter((m) => m.partition === 1).length, 5, "partition 1 untouched");
  });

  test("offset -1 deletes up to the high watermark; version may be omitted", async () => {
    const r = await deleteRecords('{"partitions": [{"topic": "dr", "partition": 1, "offset": -1}]}');
    assert.equal(r.code, 0, describeResult("delete-records", r));
    assert.deepEqual(lines(r.stdout).slice(2), ["partition: dr-1\tlow_watermark: 5"]);
    const [earliest] = await fx.admin.listOffsets([{ topic: "dr", partition: 1, spec: "earliest" }]);
    assert.equal(earliest.offset, 5n);
  });

  test("an unknown topic is reported per partition (exit 1)", async () => {
    const r = await deleteRecords(
      '{"partitions": [{"topic": "nope", "partition": 0, "offset": 1}], "version": 1}',
    );
    assert.equal(r.code, 1, describeResult("delete-records", r));
    assert.deepEqual(lines(r.stdout).slice(2), [
      "partition: nope-0\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic 'nope' does not exist",
    ]);
  });

  test("bad JSON files: one line naming the JSON path, exit 1, nothing deleted", async () => {
    // Each message starts with the file's name (offsets-<n>.json), then the JSON path or the line and column.
    const cases: Array<[string, string]> = [
      ["{not json", "not valid JSON at line 1, column 2: Expected property name or '}'"],
      [
        '{"partitions": [\n  {"topic": "dr",\n   "partition": 0 "offset": 1}]}',
        "not valid JSON at line 3, column 19:",
      ],
      ['{"partitions": [', "not valid JSON at line 1, column 17:"],
      ["[]", "(root): expected an object, got an array"],
      ['{"version": 1}', "(root): Missing partitions field"],
      ['{"partitions": [], "version": 2}', "version: Not supported version field value 2 (expected 1)"],
      [
        '{"partitions": {"topic": "dr"}}',
        "partitions: expected an array of {topic, partition, offset}, got an object",
      ],
      ['{"partitions": [7]}', "partitions[0]: expected an object, got a number (7)"],
      [
        '{"partitions": [{"partition": 0, "offset": 1}]}',
        "partitions[0].topic: expected a topic name (1 to 249 of a-z A-Z 0-9 . _ -), got nothing (the field is missing)",
      ],
      [
        '{"partitions": [{"topic": "d r", "partition": 0, "offset": 1}]}',
        'partitions[0].topic: expected a topic name (1 to 249 of a-z A-Z 0-9 . _ -), got a string ("d r")',
      ],
      [
        '{"partitions": [{"topic": "dr", "partition": 0, "offset": 1}, {"topic": "dr", "partition": "1", "offset": 1}]}',
        'partitions[1].partition: expected a partition id (an integer from 0 to 2147483647), got a string ("1")',
      ],
      [
        '{"partitions": [{"topic": "dr", "partition": 0, "offset": 1}, {"topic": "dr", "partition": 1, "offset": 1}, {"topic": "dr", "partition": 2, "offset": "4"}]}',
        'partitions[2].offset: expected an offset (an integer, -1 for the high watermark), got a string ("4")',
      ],
      [
        '{"partitions": [{"topic": "dr", "partition": 0, "offset": 1.5}]}',
        "partitions[0].offset: expected an offset (an integer, -1 for the high watermark), got a number (1.5)",
      ],
      [
        '{"partitions": [{"topic": "dr", "partition": -1, "offset": 1}]}',
        "partitions[0].partition: expected a partition id (an integer from 0 to 2147483647), got a number (-1)",
      ],
      [
        '{"partitions": [{"topic": "dr", "partition": 0, "offset": 4}, {"topic": "dr", "partition": 0, "offset": 4}]}',
        "Offset json file contains duplicate topic partitions: dr-0",
      ],
    ];
    for (const [json, expected] of cases) {
      const file = `offsets-${files}.json`;
      const r = await deleteRecords(json);
      assert.equal(r.code, 1, describeResult(json, r));
      assert.equal(r.stdout, "", json);
      const err = lines(r.stderr);
      assert.equal(err.length, 1, describeResult(json, r));
      assert.ok(
        err[0].includes(`${file}: ${expected}`),
        `${json}\n  got:      ${err[0]}\n  expected: …${file}: ${expected}`,
      );
    }
    const [earliest] = await fx.admin.listOffsets([{ topic: "dr", partition: 0, spec: "earliest" }]);
    assert.equal(earliest.offset, 3n, "nothing deleted by a rejected file");
  });

  test("missing options and files are one line", async () => {
    const noFile = await tributary("delete-records", "--bootstrap-server", fx.broker.bootstrap);
    assert.equal(noFile.code, 1);
    assert.equal(noFile.stderr, 'Missing required argument "[offset-json-file]"\n');
    const missing = await tributary(
      "delete-records",
      "--bootstrap-server",
      fx.broker.bootstrap,
      "--offset-json-file",
      "/nonexistent/offsets.json",
    );
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, "/nonexistent/offsets.json: no such file\n");
    const help = await tributary("delete-records", "--help");
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^--offset-json-file <String: Offset json/m);
  });
});
