// Issue 16: a broker refuses the controller's requests from a stale controller epoch (STALE_CONTROLLER_EPOCH)
// and those addressed to an earlier incarnation of itself (STALE_BROKER_EPOCH), on the wire, and keeps its
// metadata as it was. The requests are sent by this test over a real connection, as a controller that lost
// its epoch (or a delayed request from before a re-registration) would send them.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { BrokerConnection } from "../../src/client/network/broker-connection.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ClusterHarness, withLogTails } from "../support/cluster-harness.js";

let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 2, name: "controller-fencing" });
});

after(async () => {
  await cluster?.close();
});

test("stale controller epoch and stale broker epoch are refused by the broker", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      await c.createTopic("fenced", 2, 2);
      const controller = await c.waitForController();
      const target = controller === 0 ? 1 : 0;
      const epoch = (await c.controllerEpoch())!;
      const brokerEpoch = (await c.stat(`/brokers/ids/${target}`))!.czxid;
      const b = c.broker(target);
      const conn = await BrokerConnection.connect(b.host, b.port, { clientId: "stale-controller" });
      try {
        // An UpdateMetadata from an older controller epoch that would empty the broker's view.
        const um = await conn.send(Apis.UpdateMetadata, conn.versionFor(Apis.UpdateMetadata), {
          controllerId: controller,
          isKRaftController: false,
          type: 0,
          controllerEpoch: epoch - 1,
          brokerEpoch,
          ungroupedPartitionStates: [],
          topicStates: [],
          liveBrokers: [],
        });
        assert.equal(um.errorCode, ErrorCode.STALE_CONTROLLER_EPOCH);
        // A LeaderAndIsr at the current controller epoch but for an older incarnation of the broker.
        const lai = await conn.send(Apis.LeaderAndIsr, conn.versionFor(Apis.LeaderAndIsr), {
          controllerId: controller,
          isKRaftController: false,
          controllerEpoch: epoch,
          brokerEpoch: brokerEpoch - 1n,
          type: 0,
          ungroupedPartitionStates: [],
          topicStates: [
            {
              topicName: "fenced",
              topicId: "AAAAAAAAAAAAAAAAAAAAAA",
              partitionStates: [
                {
                  topicName: "fenced",
                  partitionIndex: 0,
                  controllerEpoch: epoch,
                  leader: -1,
                  leaderEpoch: 1000,
                  isr: [],
                  partitionEpoch: 1000,
                  replicas: [0, 1],
                  addingReplicas: [],
                  removingReplicas: [],
                  isNew: false,
                  leaderRecoveryState: 0,
                },
              ],
            },
          ],
          liveLeaders: [],
        });
        assert.equal(lai.errorCode, ErrorCode.STALE_BROKER_EPOCH);
        // Nothing changed: both brokers alive in its metadata, the partition still led.
        const md = await c.metadata(target);
        assert.deepEqual([...md.brokers].sort(), [0, 1]);
        assert.equal(md.controllerId, controller);
        const parts = await c.describe("fenced", `${b.host}:${b.port}`);
        assert.ok(
          parts.every((p) => p.leader >= 0),
          JSON.stringify(parts),
        );
      } finally {
        conn.close();
      }
    },
  );
});
