// Rebalance after a member dies (issue 6, "Must show"): three kafka-python consumers, each its own python
// process, consume and commit continuously from a 6-partition topic that a producer keeps writing to, and
// print their assignment per generation and their commits as JSON lines. One is SIGKILLed (so it never
// sends LeaveGroup): the broker keeps it until its session timeout (2 s) passes, then its partitions move
// to the two others in a new generation. Checked: within one generation no partition is owned by two
// members; the committed offsets (sampled with OffsetFetch all along, and as each member commits) never
// go backwards; and once everything is consumed the committed offsets equal the records produced.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type kafkajs from "kafkajs";
import { type BrokerHarness, sleep, waitFor, withDeadline } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import {
  committedOffsets,
  committedOffsetsOrRetry,
  describeGroup,
  Member,
  type MemberEvent,
  startGroupBroker,
} from "./group-support.js";

const TOPIC = "rebalance";
const GROUP = "rebalance-group";
const PARTITIONS = 6;
const SESSION_TIMEOUT_MS = 2000;
const all = Array.from({ length: PARTITIONS }, (_, i) => i);

describe("rebalance when a member dies without leaving", {
  skip: skipUnlessInstalled("python3", "confluent-kafka", "kafka-python"),
  timeout: 120_000,
}, () => {
  let broker: BrokerHarness;
  let producer: kafkajs.Producer;
  const members: Member[] = [];

  before(async () => {
    ({ broker, producer } = await startGroupBroker("rebalance", "rebalance-setup", [
      { topic: TOPIC, numPartitions: PARTITIONS },
    ]));
  });

  after(async () => {
    await Promise.all(members.map((m) => m.stop("SIGKILL").catch(() => undefined)));
    await producer?.disconnect().catch(() => undefined);
    await broker?.close();
  });

  test("a SIGKILLed member's partitions move after the session timeout; commits never go back or get lost", async (t) => {
    // A producer writing one record to every partition every 50 ms until told to stop.
    const produced = all.map(() => 0);
    let producing = true;
    const producerLoop = (async () => {
      for (let i = 0; producing; i++) {
        const messages = all.map((p) => ({ partition: p, value: `live-p${p}-${i}` }));
        await withDeadline("produce", 15_000, producer.send({ topic: TOPIC, acks: -1, messages }));
        for (const p of all) produced[p]++;
        await sleep(50);
      }
    })();

    producerLoop.catch(() => undefined); // awaited (and its error thrown) below

    // Committed offsets sampled all along with OffsetFetch: any decrease is recorded.
    const last = all.map(() => -1);
    const backwards: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const c = await committedOffsetsOrRetry(broker, GROUP, TOPIC, PARTITIONS);
        for (const p of all) {
          if (c === undefined) break;
          if (c[p] < last[p]) backwards.push(`partition ${p}: ${last[p]} -> ${c[p]}`);
          last[p] = Math.max(last[p], c[p]);
        }
        await sleep(100);
      }
    })();

    sampler.catch(() => undefined); // awaited (and its error thrown) below

    const mine = [0, 1, 2].map(
      (i) =>
        new Member(broker, `rebalance-kp-${i}`, {
          client: "kafka-python",
          group: GROUP,
          topic: TOPIC,
          assignor: "range",
          session_timeout_ms: SESSION_TIMEOUT_MS,
          heartbeat_interval_ms: 300,
        }),
    );
    members.push(...mine);
    const context = () => `${mine.map((m) => m.describe()).join("\n")}\n${broker.output}`;
    const assignedEvents = (m: Member) => m.events.filter((e) => e.event === "assigned");
    const lastGeneration = (m: Member) => assignedEvents(m).at(-1)?.generation ?? -1;

    /** Waits until `live` are the group's members, Stable, all in one generation above `after`, covering all. */
    const settle = (live: Member[], afterGeneration: number) =>
      waitFor(`group settles with ${live.map((m) => m.clientId).join(", ")}`, 40_000, async () => {
        const gens = new Set(live.map(lastGeneration));
        if (gens.size !== 1) return undefined;
        const gen = [...gens][0] as number;
        if (gen <= afterGeneration) return undefined;
        const g = await describeGroup(broker, GROUP, TOPIC);
        if (g.state !== "Stable" || g.members.length !== live.length) return undefined;
        for (const m of g.members) {
          const member = live.find((x) => x.clientId === m.clientId);
          if (member === undefined || JSON.stringify(member.assignment) !== JSON.stringify(m.partitions))
            return undefined;
        }
        return { gen, group: g };
      }).catch((e) => {
        throw new Error(`${(e as Error).message}\n${context()}`);
      });

    try {
      const first = await settle(mine, 0);
      assert.deepEqual(first.group.members.flatMap((m) => m.partitions).sort(), all);
      // Every member is consuming and committing.
      await waitFor("every member commits", 20_000, async () =>
        mine.every((m) =>
          m.events.some((e) => e.event === "commit" && e.seq > (assignedEvents(m).at(-1)?.seq ?? 0)),
        )
          ? true
          : undefined,
      ).catch((e) => {
        throw new Error(`${(e as Error).message}\n${context()}`);
      });

      const [victim, ...survivors] = [mine[1], mine[0], mine[2]];
      const victimPartitions = victim.assignment ?? [];
      assert.ok(victimPartitions.length > 0, context());
      const killedAt = Date.now();
      await victim.stop("SIGKILL");
      // No LeaveGroup: right after the kill the broker still counts the dead member in.
      const right = await describeGroup(broker, GROUP, TOPIC);
      const stillThere = Date.now() - killedAt < SESSION_TIMEOUT_MS / 2;
      if (stillThere)
        assert.ok(
          right.members.some((m) => m.clientId === victim.clientId),
          `the killed member is still a member before its session times out: ${JSON.stringify(right)}`,
        );

      const second = await settle(survivors, first.gen);
      const movedAfter = Date.now() - killedAt;
      assert.ok(
        movedAfter >= SESSION_TIMEOUT_MS - 600,
        `partitions moved ${movedAfter} ms after the kill, before the ${SESSION_TIMEOUT_MS} ms session timeout`,
      );
      assert.deepEqual(second.group.members.flatMap((m) => m.partitions).sort(), all, context());
      for (const p of victimPartitions)
        assert.ok(
          survivors.some((m) => m.assignment?.includes(p)),
          `partition ${p} of the killed member moved\n${context()}`,
        );

      // Keep producing a little under the new generation, then let the survivors drain everything.
      await sleep(500);
      producing = false;
      await producerLoop;
      const final = await waitFor("committed offsets reach the end of every partition", 30_000, async () => {
        const c = await committedOffsets(broker, GROUP, TOPIC, PARTITIONS);
        return all.every((p) => c[p] === produced[p]) ? c : undefined;
      }).catch((e) => {
        throw new Error(`${(e as Error).message}; produced ${produced}, committed ${last}\n${context()}`);
      });
      assert.deepEqual(
        all.map((p) => final[p]),
        produced,
      );
      sampling = false;
      await sampler;
      await Promise.all(survivors.map((m) => m.stop("SIGTERM")));

      t.diagnostic(
        `killed ${victim.clientId} (partitions ${victimPartitions}); generation ${first.gen} -> ${second.gen} after ${movedAfter} ms; committed ${all.map((p) => final[p])}`,
      );
      // Within one generation, no partition is owned by two members.
      const byGeneration = new Map<number, Array<{ who: string; partitions: number[] }>>();
      for (const m of mine)
        for (const e of assignedEvents(m)) {
          const list = byGeneration.get(e.generation as number) ?? [];
          list.push({ who: m.clientId, partitions: e.partitions ?? [] });
          byGeneration.set(e.generation as number, list);
        }
      assert.ok(byGeneration.size >= 2, `at least two generations: ${[...byGeneration.keys()]}`);
      for (const [gen, owners] of byGeneration) {
        const seen = new Map<number, string>();
        for (const o of owners)
          for (const p of o.partitions) {
            assert.equal(
              seen.get(p),
              undefined,
              `generation ${gen}: partition ${p} owned by ${seen.get(p)} and ${o.who}`,
            );
            seen.set(p, o.who);
          }
      }

      // Committed offsets never went backwards: neither as sampled, nor in any member's own commits, nor
      // across the move (a survivor's first commit of a moved partition is not below the victim's last).
      assert.deepEqual(backwards, [], "committed offsets went backwards");
      const commitsOf = (m: Member, p: number) =>
        m.events
          .filter((e: MemberEvent) => e.event === "commit" && e.offsets?.[String(p)] !== undefined)
          .map((e) => e.offsets?.[String(p)] as number);
      for (const m of mine)
        for (const p of all) {
          const c = commitsOf(m, p);
          for (let i = 1; i < c.length; i++)
            assert.ok(c[i] >= c[i - 1], `${m.clientId} partition ${p} commits ${c}`);
        }
      for (const p of victimPartitions) {
        const victimLast = commitsOf(victim, p).at(-1) ?? 0;
        const heir = survivors.find((m) => m.assignment?.includes(p)) as Member;
        const killSeq = Math.max(...assignedEvents(heir).map((e) => e.seq));
        const heirFirst = heir.events
          .filter((e) => e.seq > killSeq && e.event === "commit" && e.offsets?.[String(p)] !== undefined)
          .map((e) => e.offsets?.[String(p)] as number)[0];
        assert.ok(
          heirFirst !== undefined && heirFirst >= victimLast,
          `partition ${p}: ${victimLast} then ${heirFirst}`,
        );
      }
      // The victim never closed (so never sent LeaveGroup); the survivors did.
      assert.ok(!victim.events.some((e) => e.event === "closed"), victim.describe());
      for (const m of survivors)
        assert.ok(
          m.events.some((e) => e.event === "closed"),
          m.describe(),
        );
    } finally {
      producing = false;
      sampling = false;
      await producerLoop.catch(() => undefined);
      await sampler.catch(() => undefined);
    }
  });
});
