// `tributary acls` end to end on the command line: Kafka's AclCommand checks and errors in one line
// (never a stack trace), and a broker without an authorizer answering SECURITY_DISABLED. (Adding,
// listing and removing ACLs against brokers with the authorizer: test/cluster/acl-authorization.test.ts.)

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cliToolFixture, lines, tributary } from "../../support/cli-tool-fixture.js";

const fx = cliToolFixture({ name: "tributary-acls-tool" });
const acls = fx.tool("acls");

function oneLine(
  r: { code: number | null; stdout: string; stderr: string },
  expected: RegExp | string,
): void {
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const err = lines(r.stderr);
  assert.equal(err.length, 1, r.stderr);
  if (typeof expected === "string") assert.equal(err[0], expected);
  else assert.match(err[0], expected);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
}

describe("tributary acls", () => {
  test("bad command lines are one line each", async () => {
    oneLine(
      await tributary("acls", "--list"),
      "One of --bootstrap-server or --bootstrap-controller must be specified",
    );
    oneLine(await acls("--topic", "t"), "Command must include exactly one action: --list, --add, --remove. ");
    oneLine(
      await acls("--add", "--list", "--topic", "t"),
      "Command must include exactly one action: --list, --add, --remove. ",
    );
    oneLine(
      await acls("--add", "--producer", "--allow-principal", "User:a"),
      "With --producer you must specify a --topic or --transactional-id",
    );
    oneLine(
      await acls("--add", "--consumer", "--topic", "t", "--allow-principal", "User:a"),
      "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.",
    );
    oneLine(
      await acls("--list", "--producer", "--topic", "t"),
      'Option "[list]" can\'t be used with option "[producer]"',
    );
    oneLine(
      await acls("--add", "--allow-principal", "alice", "--topic", "t"),
      "expected a string in format principalType:principalName but got alice",
    );
    oneLine(
      await acls("--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"),
      "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls.",
    );
    oneLine(
      await acls("--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "fuzzy"),
      "Cannot parse option --resource-pattern-type value fuzzy: expected one of ANY, MATCH, LITERAL, PREFIXED",
    );
    oneLine(
      await acls("--add", "--allow-principal", "User:a", "--operation", "ClusterAction", "--topic", "t"),
      /^ResourceType TOPIC only supports operations READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS, ALL$/,
    );
    oneLine(
      await acls("--add", "--topic", "t"),
      "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.",
    );
    oneLine(
      await acls("--add", "--allow-principal", "User:a"),
      "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>",
    );
  });

  test("a broker without an authorizer answers SECURITY_DISABLED", async () => {
    oneLine(
      await acls("--add", "--allow-principal", "User:a", "--operation", "Read", "--topic", "t"),
      "Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker",
    );
    oneLine(
      await acls("--list"),
      "Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker",
    );
  });
});
