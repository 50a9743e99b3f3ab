// Issue 18: preferred and unclean leader elections on a real 3-broker cluster (real ZooKeeper, broker
// processes, the `tributary leader-election` tool as kafka-leader-election.sh). Leadership skewed by a
// broker restart goes back to the preferred replicas with `--election-type PREFERRED
// --all-topic-partitions` at once, and by itself within one leader.imbalance.check.interval.seconds when
// auto.leader.rebalance.enable is on; an unclean election gives a leaderless partition the live replica
// outside its ISR; a preferred leader that is down is one error line; bad options and JSON files are one
// line each and elect nothing.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { type CommandResult, outputLines as lines, showResult as show } from "../support/broker-harness.js";
import { ClusterHarness, type PartitionDescription, withLogTails } from "../support/cluster-harness.js";
import { waitUnregistered } from "../support/failover-steps.js";

const onPreferred = (ps: readonly PartitionDescription[]): boolean =>
  ps.length > 0 && ps.every((p) => p.leader === p.replicas[0] && p.isr.length === p.replicas.length);

/** Restarts broker `i` (SIGTERM: leadership moves off it) and waits until it is back in every ISR. */
async function bounce(
  c: ClusterHarness,
  i: number,
  topic: string,
  rf: number,
): Promise<PartitionDescription[]> {
  await c.stopBroker(i, "SIGTERM");
  await c.waitForDescribe(topic, `no partition led by ${i}`, 20_000, (ps) => ps.every((p) => p.leader !== i));
  await c.startBroker(i);
  return c.waitForDescribe(topic, `every ISR full again (${rf})`, 30_000, (ps) =>
    ps.every((p) => p.isr.length === rf && p.leader >= 0),
  );
}

describe("leader-election tool (auto.leader.rebalance.enable=false)", () => {
  let cluster: ClusterHarness | undefined;

  before(async () => {
    cluster = await ClusterHarness.start({
      brokers: 3,
      name: "leader-election",
      overrides: { "auto.leader.rebalance.enable": "false" },
    });
  });

  after(async () => {
    await cluster?.close();
  });

  const elect = (args: readonly string[]): Promise<CommandResult> =>
    cluster!.tributary(["leader-election", "--bootstrap-server", cluster!.bootstrap(), ...args]);

  test("PREFERRED --all-topic-partitions moves leadership back to the preferred replicas at once", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        await c.createTopic("skewed", 3, 3);
        await c.waitForDescribe("skewed", "on the preferred leaders", 20_000, onPreferred);
        // Broker 0 is the preferred leader of one of the three partitions; after its restart it leads none.
        const skewed = await bounce(c, 0, "skewed", 3);
        const notPreferred = skewed.filter((p) => p.leader !== p.replicas[0]);
        assert.ok(notPreferred.length >= 1, `leadership skewed: ${JSON.stringify(skewed)}`);
        const r = await elect(["--election-type", "PREFERRED", "--all-topic-partitions"]);
        assert.equal(r.code, 0, show(r));
        assert.deepEqual(lines(r.stdout), [
          `Successfully completed leader election (PREFERRED) for partitions ${notPreferred.map((p) => `skewed-${p.partition}`).join(", ")}`,
        ]);
        // The answer comes once the controller's broker has the new leaders: describe at once.
        const now = await c.describe("skewed");
        assert.ok(onPreferred(now), JSON.stringify(now));
        const again = await elect(["--election-type", "preferred", "--topic", "skewed", "--partition", "1"]);
        assert.equal(again.code, 0, show(again));
        assert.deepEqual(lines(again.stdout), ["Valid replica already elected for partitions skewed-1"]);
      },
    );
  });

  test("UNCLEAN gives a leaderless partition its live replica outside the ISR; PREFERRED with the preferred leader down fails in one line", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        await c.topics([
          "--create",
          "--topic",
          "lonely",
          "--replica-assignment",
          "1:2,1:2",
          "--config",
          "unclean.leader.election.enable=false",
        ]);
        await c.waitForDescribe(
          "lonely",
          "led by 1, ISR 1,2",
          20_000,
          (ps) => ps.length === 2 && ps.every((p) => p.leader === 1 && p.isr.length === 2),
        );
        await c.stopBroker(2, "SIGKILL");
        await c.waitForDescribe("lonely", "ISR [1]", 30_000, (ps) => ps.every((p) => p.isr.join() === "1"));
        await c.stopBroker(1, "SIGKILL");
        // The ISR may have shrunk (replica.lag.time.max.ms) before broker 2's ZooKeeper session expired: a
        // restart before that would find its id still registered by the old session.
        await waitUnregistered(c, 2, 30_000);
        await c.startBroker(2);
        const offline = await c.waitForDescribe("lonely", "no leader (2 is not in the ISR)", 30_000, (ps) =>
          ps.every((p) => p.leader === -1),
        );
        assert.equal(offline[0].leader, -1);
        // get-offsets names each leaderless partition in its own line (it named the last one for all).
        const config = join(c.broker(0).root, "short-timeout.properties");
        writeFileSync(config, "default.api.timeout.ms=2000\nretry.backoff.ms=200\n");
        const offsets = await c.tributary([
          "get-offsets",
          "--bootstrap-server",
          c.bootstrap(),
          "--topic",
          "lonely",
          "--command-config",
          config,
        ]);
        assert.deepEqual(lines(offsets.stderr), [
          "Skip getting offsets for topic-partition lonely-0 due to error: lonely-0 has no leader",
          "Skip getting offsets for topic-partition lonely-1 due to error: lonely-1 has no leader",
        ]);

        const preferred = await elect([
          "--election-type",
          "PREFERRED",
          "--topic",
          "lonely",
          "--partition",
          "0",
        ]);
        assert.equal(preferred.code, 1, show(preferred));
        assert.deepEqual(lines(preferred.stdout), [
          "Error completing leader election (PREFERRED) for partition: lonely-0: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition lonely-0 under strategy PreferredReplicaPartitionLeaderElectionStrategy",
        ]);
        assert.deepEqual(lines(preferred.stderr), ["1 replica(s) could not be elected"]);

        const unclean = await elect(["--election-type", "unclean", "--topic", "lonely", "--partition", "0"]);
        assert.equal(unclean.code, 0, show(unclean));
        assert.deepEqual(lines(unclean.stdout), [
          "Successfully completed leader election (UNCLEAN) for partitions lonely-0",
        ]);
        const led = await c.describe("lonely");
        assert.equal(led[0].leader, 2, JSON.stringify(led));
        assert.deepEqual(led[0].isr, [2]);
        await c.startBroker(1);
        await c.waitForDescribe("lonely", "1 back in every ISR", 30_000, (ps) =>
          ps.every((p) => p.isr.length === 2),
        );
      },
    );
  });

  test("bad options and JSON files: one line each, exit 1, nothing elected", async () => {
    const c = cluster!;
    const dir = c.broker(0).root;
    const file = (name: string, text: string): string => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    const cases: Array<[string[], string]> = [
      [["--all-topic-partitions"], "Missing required option(s): election-type"],
      [
        ["--election-type", "preferred"],
        "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file",
      ],
      [["--election-type", "preferred", "--topic", "skewed"], 'Missing required argument "[partition]"'],
      [
        ["--election-type", "best", "--all-topic-partitions"],
        "Invalid value 'best' for --election-type: expected preferred or unclean",
      ],
      [
        ["--election-type", "preferred", "--path-to-json-file", join(dir, "none.json")],
        `${join(dir, "none.json")}: no such file`,
      ],
      [
        [
          "--election-type",
          "preferred",
          "--path-to-json-file",
          file("syntax.json", '{"partitions": [\n {"topic": "skewed" "partition": 0}]}'),
        ],
        `${join(dir, "syntax.json")}: not valid JSON at line 2, column 21: Expected ',' or '}' after property value`,
      ],
      [
        ["--election-type", "preferred", "--path-to-json-file", file("nopart.json", '{"version": 1}')],
        `${join(dir, "nopart.json")}: (root): Replica election data is missing "partitions" field`,
      ],
      [
        [
          "--election-type",
          "preferred",
          "--path-to-json-file",
          file("type.json", '{"partitions": [{"topic": "skewed", "partition": "0"}]}'),
        ],
        `${join(dir, "type.json")}: partitions[0].partition: expected a partition id (an integer from 0 to 2147483647), got a string ("0")`,
      ],
      [
        [
          "--election-type",
          "preferred",
          "--path-to-json-file",
          file(
            "dup.json",
            '{"partitions": [{"topic": "skewed", "partition": 0}, {"topic": "skewed", "partition": 0}]}',
          ),
        ],
        `${join(dir, "dup.json")}: (root): Replica election data contains duplicate partitions: skewed-0`,
      ],
    ];
    for (const [args, expected] of cases) {
      const r = await elect(args);
      assert.equal(r.code, 1, `${args.join(" ")}\n${show(r)}`);
      assert.equal(r.stdout, "", args.join(" "));
      assert.deepEqual(lines(r.stderr), [expected], args.join(" "));
    }
    const unknown = await elect(["--election-type", "preferred", "--topic", "skewed", "--partition", "7"]);
    assert.equal(unknown.code, 1, show(unknown));
    assert.deepEqual(lines(unknown.stdout), [
      "Error completing leader election (PREFERRED) for partition: skewed-7: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.",
    ]);
  });
});

describe("auto.leader.rebalance.enable", () => {
  const INTERVAL_S = 3;
  let cluster: ClusterHarness | undefined;

  before(async () => {
    cluster = await ClusterHarness.start({
      brokers: 3,
      name: "auto-rebalance",
      overrides: {
        "leader.imbalance.check.interval.seconds": String(INTERVAL_S),
        "leader.imbalance.per.broker.percentage": "10",
      },
    });
  });

  after(async () => {
    await cluster?.close();
  });

  test("leadership skewed by a restart returns to the preferred replicas within one check interval", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        await c.createTopic("rebalanced", 6, 3);
        await c.waitForDescribe("rebalanced", "on the preferred leaders", 20_000, onPreferred);
        await c.stopBroker(1, "SIGTERM");
        await c.waitForDescribe("rebalanced", "no partition led by 1", 20_000, (ps) =>
          ps.every((p) => p.leader !== 1),
        );
        await c.startBroker(1);
        await c.waitForDescribe("rebalanced", "1 back in every ISR", 30_000, (ps) =>
          ps.every((p) => p.isr.includes(1)),
        );
        const since = Date.now();
        // Broker 1 prefers 2 of the 6 partitions (33 % > 10 % led elsewhere): the next check moves them back.
        await c.waitFor("every partition on its preferred leader", (INTERVAL_S + 5) * 1000, async () =>
          onPreferred(await c.describe("rebalanced")) ? true : undefined,
        );
        const took = Date.now() - since;
        assert.ok(took <= (INTERVAL_S + 5) * 1000, `took ${took} ms`);
      },
    );
  });
});
