// The broker's components (server/components/) started on their own, without a KafkaServer: the log dirs
// locked, the LogManager and the socket server with a real socket on 127.0.0.1 — no metadata store,
// ReplicaManager, coordinators or controller. A client's DescribeLogDirs is answered from that LogManager
// (the real handler), nothing else starts (no metadata store file in the dir, no "Cluster ID" line), and the
// shutdown in order leaves the clean-shutdown marker and the dir unlocked. Also the shutdown's rule (every
// step runs, a failure is logged as "Error while …" and returned), and the LogDirFailureHandler's one
// notification for the log dir events of one turn of the event loop, and the policies the broker's startup
// used to inline (min.insync.replicas per topic, group.consumer.assignors names).

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Logger, setLogSink } from "../../src/common/logger.js";
import { MemoryPool } from "../../src/common/memory-pool.js";
import { MockScheduler, SystemScheduler } from "../../src/common/scheduler.js";
import { MockTime, SYSTEM_TIME } from "../../src/common/time.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { defaultDescribeLogDirsRequest } from "../../src/protocol/generated/messages/DescribeLogDirsRequest.js";
import { AuthHelper } from "../../src/server/auth-helper.js";
import type { BrokerServices } from "../../src/server/broker-services.js";
import {
  RequestProcessingComponent,
  SocketServerComponent,
} from "../../src/server/components/network-components.js";
import {
  type ServerContext,
  shutdownInOrder,
  startInOrder,
} from "../../src/server/components/server-component.js";
import { LogDirLocksComponent, LogManagerComponent } from "../../src/server/components/storage-components.js";
import { consumerGroupAssignorName } from "../../src/server/coordinator/group/group-coordinator-config.js";
import { describeLogDirsHandler } from "../../src/server/handlers/35-describe-log-dirs.js";
import { KafkaConfig } from "../../src/server/kafka-config.js";
import { LogDirFailureHandler } from "../../src/server/replication/log-dir-failure-handler.js";
import { minInsyncReplicasOf } from "../../src/server/replication/replica-manager-config.js";
import { RequestChannel } from "../../src/server/request-channel.js";
import { RequestPipeline } from "../../src/server/request-pipeline.js";
import { CredentialCache } from "../../src/server/security/credential-cache.js";
import type { LogDirListener } from "../../src/storage/log-dir-failure-channel.js";
import { LogDirLocks } from "../../src/storage/log-dir-lock.js";
import type { LogManager } from "../../src/storage/log-manager.js";
import { WireClient } from "./wire-client.js";

const root = mkdtempSync(join(tmpdir(), "tributary-server-components-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** Runs `fn` with every log line captured. */
async function captureLines<T>(fn: (lines: string[]) => Promise<T>): Promise<T> {
  const lines: string[] = [];
  const previous = setLogSink((line) => lines.push(line));
  try {
    return await fn(lines);
  } finally {
    setLogSink(previous);
  }
}

describe("server components", () => {
  test("the log manager and the socket server start alone and serve a real socket", async () => {
    const dir = join(root, "logs");
    const config = new KafkaConfig({
      "log.dirs": dir,
      listeners: "PLAINTEXT://127.0.0.1:0",
      "metrics.http.listener": "",
    });
    const scheduler = new SystemScheduler();
    const ctx: ServerContext = {
      config,
      time: SYSTEM_TIME,
      scheduler,
      logger: new Logger("kafka.server.KafkaServer", "KafkaServer id=0"),
    };
    const locks = new LogDirLocksComponent(ctx);
    const logs = new LogManagerComponent(ctx, locks, () => null);
    const channel = new RequestChannel();
    const sockets = new SocketServerComponent(ctx, channel, new MemoryPool(), new CredentialCache());
    const processing = new RequestProcessingComponent(channel, sockets);

    const { errors, lines } = await captureLines(async (lines) => {
      let errors: unknown[] = [];
      try {
        await startInOrder([locks, sockets, logs]);
        logs.get().getOrCreateLog({ topic: "alone", partition: 0 });
        // The real DescribeLogDirs handler, over this LogManager only.
        const services = {
          logManager: logs.get(),
          auth: new AuthHelper(),
          replicaManager: { logEndOffsetLag: () => 0n },
        } as unknown as BrokerServices;
        channel.setPipeline(new RequestPipeline([describeLogDirsHandler(services)], SYSTEM_TIME));
        await startInOrder([processing]);

        const c = await WireClient.connect(sockets.get().boundPort());
        try {
          const res = await c.request(Apis.DescribeLogDirs, 1, {
            ...defaultDescribeLogDirsRequest(),
            topics: null,
          });
          assert.equal(res.errorCode, ErrorCode.NONE);
          assert.deepEqual(
            res.results.map((r) => ({
              dir: r.logDir,
              errorCode: r.errorCode,
              topics: r.topics.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)]),
            })),
            [{ dir, errorCode: ErrorCode.NONE, topics: [["alone", [0]]] }],
          );
        } finally {
          c.close();
        }
      } finally {
        errors = await shutdownInOrder([processing, sockets, logs, locks], ctx.logger);
        scheduler.shutdown();
      }
      return { errors, lines };
    });

    assert.deepEqual(errors, []);
    assert.ok(existsSync(join(dir, ".kafka_cleanshutdown")), "the LogManager shut down cleanly");
    assert.ok(!existsSync(join(dir, "__tributary_metadata.json")), "no metadata store was opened");
    assert.ok(
      !lines.some((l) => /Cluster ID|ReplicaManager|GroupCoordinator|Controller/.test(l)),
      lines.join("\n"),
    );
    assert.ok(lines.some((l) => /Awaiting socket connections on 127\.0\.0\.1:\d+\./.test(l)));
    // The dir is free again.
    LogDirLocks.acquire([dir]).release();
  });

  test("shutdownInOrder runs every step in order, logs a failure as Kafka does and returns it", async () => {
    const ran: string[] = [];
    const failure = new Error("b failed");
    const { errors, lines } = await captureLines(async (lines) => {
      const errors = await shutdownInOrder(
        [
          { stopping: "stopping a", shutdown: () => void ran.push("a") },
          {
            stopping: "stopping b",
            shutdown: async () => {
              ran.push("b");
              throw failure;
            },
          },
          { stopping: "stopping c", shutdown: () => void ran.push("c") },
        ],
        new Logger("kafka.server.KafkaServer", "KafkaServer id=7"),
      );
      return { errors, lines };
    });
    assert.deepEqual(ran, ["a", "b", "c"]);
    assert.deepEqual(errors, [failure]);
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0], /ERROR \[KafkaServer id=7\] Error while stopping b: Error: b failed/);
  });

  test("LogDirFailureHandler: the log dir events of one turn make one notification", async () => {
    let listener: LogDirListener | undefined;
    const logManager = {
      addLogDirListener: (l: LogDirListener) => {
        listener = l;
      },
    } as unknown as LogManager;
    const scheduler = new MockScheduler(new MockTime());
    let notifications = 0;
    const handler = new LogDirFailureHandler(
      () => logManager,
      scheduler,
      async () => `/log_dir_event_notification/log_dir_event_000000000${notifications++}`,
      new Logger("kafka.server.KafkaServer", "KafkaServer id=0"),
    );
    const lines = await captureLines(async (lines) => {
      handler.startup();
      listener!("/d1", "offline", "EIO");
      listener!("/d2", "full", "ENOSPC");
      listener!("/d1", "offline", "EIO");
      assert.equal(notifications, 0, "sent from a scheduled task");
      await scheduler.tick(0);
      await new Promise((r) => setImmediate(r));
      assert.equal(notifications, 1);
      listener!("/d2", "writable", "");
      await scheduler.tick(0);
      await new Promise((r) => setImmediate(r));
      assert.equal(notifications, 2);
      return lines;
    });
    assert.deepEqual(
      lines.map((l) => l.replace(/^.*\] /, "").replace(/ \(kafka\.server\.KafkaServer\)$/, "")),
      [
        "Log dir /d1 is offline: telling the controller",
        "Log dir /d2 is full: telling the controller",
        "Log dir /d1 is offline: telling the controller",
        "Told the controller about a log dir event (/log_dir_event_notification/log_dir_event_0000000000)",
        "Log dir /d2 is writable: telling the controller",
        "Told the controller about a log dir event (/log_dir_event_notification/log_dir_event_0000000001)",
      ],
    );
  });

  test("min.insync.replicas: the topic's positive integer, else the broker's", () => {
    assert.equal(minInsyncReplicasOf({ "min.insync.replicas": "2" }, 1), 2);
    assert.equal(minInsyncReplicasOf({}, 3), 3);
    for (const bad of ["0", "-1", "1.5", "x", ""])
      assert.equal(minInsyncReplicasOf({ "min.insync.replicas": bad }, 1), 1, bad);
  });

  test("group.consumer.assignors: Kafka's class names and short names, as the clients name them", () => {
    assert.deepEqual(
      [
        "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
        " org.apache.kafka.coordinator.group.assignor.RangeAssignor ",
        "uniform",
        "Range",
      ].map(consumerGroupAssignorName),
      ["uniform", "range", "uniform", "range"],
    );
  });
});
