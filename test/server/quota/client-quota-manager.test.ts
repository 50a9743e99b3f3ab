// ClientQuotaManager (server/quota): Kafka's precedence of the eight user / client-id entity levels and
// the metric tags each level gives, the sampled rate over quota.window.num × quota.window.size.seconds,
// the throttle time QuotaUtils computes, the request quota's bound, and the fetch size cap — on a
// MockTime, with the entity configs as the metadata cache delivers them (ClientQuotas.applyEntityConfig).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { javaDoubleToString } from "../../../src/common/java-double.js";
import { MockTime } from "../../../src/common/time.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { ClientQuotas, parseEntityPath } from "../../../src/server/quota/client-quotas.js";
import { RequestThrottling } from "../../../src/server/quota/request-throttling.js";
import { SampledRate, throttleTimeMs } from "../../../src/server/quota/sampled-rate.js";
import type { RequestContext } from "../../../src/server/request-context.js";

const CONFIG = { numQuotaSamples: 11, quotaWindowSizeSeconds: 1 };

describe("client quota precedence", () => {
  // The eight levels, most specific first, each with its own producer_byte_rate.
  const levels: Array<[string, number]> = [
    ["users/alice/clients/app", 1],
    ["users/alice/clients/<default>", 2],
    ["users/alice", 3],
    ["users/<default>/clients/app", 4],
    ["users/<default>/clients/<default>", 5],
    ["users/<default>", 6],
    ["clients/app", 7],
    ["clients/<default>", 8],
  ];

  it("each level wins over the ones after it, and the tags name the level it came from", () => {
    const expectedTags = [
      { user: "alice", clientId: "app" },
      { user: "alice", clientId: "app" },
      { user: "alice", clientId: "" },
      { user: "alice", clientId: "app" },
      { user: "alice", clientId: "app" },
      { user: "alice", clientId: "" },
      { user: "", clientId: "app" },
      { user: "", clientId: "app" },
    ];
    for (let first = 0; first < levels.length; first++) {
      const q = new ClientQuotas(CONFIG, new MockTime());
      for (const [path, v] of levels.slice(first))
        q.applyEntityConfig(path, { producer_byte_rate: String(v) });
      assert.equal(q.produce.quotaFor("alice", "app"), levels[first][1], `from ${levels[first][0]}`);
      assert.deepEqual(q.produce.quotaMetricTags("alice", "app"), expectedTags[first], levels[first][0]);
      // Other users and clients: only the default levels apply to them.
      assert.equal(q.produce.quotaFor("bob", "other"), first <= 4 ? 5 : first === 5 ? 6 : 8);
    }
  });

  it("quotas are per type, removed by a config without the key, and absent without any", () => {
    const q = new ClientQuotas(CONFIG, new MockTime());
    assert.equal(q.produce.quotasEnabled, false);
    q.applyEntityConfig("users/alice", { consumer_byte_rate: "2048", "SCRAM-SHA-512": "salt=x" });
    q.applyEntityConfig("clients/app", { producer_byte_rate: "1024", request_percentage: "12.5" });
    assert.equal(q.produce.quotaFor("alice", "app"), 1024, "alice has no producer quota of her own");
    assert.equal(q.fetch.quotaFor("alice", "app"), 2048);
    assert.equal(q.request.quotaFor("alice", "app"), 12.5);
    q.applyEntityConfig("clients/app", {});
    assert.equal(q.produce.quotaFor("alice", "app"), undefined);
    assert.equal(q.produce.maybeRecordAndGetThrottleTimeMs("alice", "app", 1e9, 0), 0);
  });

  it("entity paths: names desanitized for client ids, users kept sanitized", () => {
    assert.deepEqual(parseEntityPath("users/CN%3Dbob/clients/my%20app"), {
      sanitizedUser: "CN%3Dbob",
      clientId: "my app",
    });
    assert.deepEqual(parseEntityPath("clients/<default>"), { clientId: "<default>" });
    assert.equal(parseEntityPath("brokers/1"), undefined);
  });
});

describe("rate and throttle time", () => {
  it("a new sensor's rate is over at least (samples − 1) windows; throttle = excess / bound × window", () => {
    const time = new MockTime();
    const rate = new SampledRate({ samples: 11, windowMs: 1000 });
    const t0 = time.milliseconds();
    rate.record(5_000_000, t0);
    assert.equal(rate.windowSize(t0), 10_000);
    assert.equal(rate.measure(t0), 500_000);
    // 25 s later only the last 11 windows count.
    for (let s = 1; s <= 25; s++) rate.record(100, t0 + s * 1000);
    assert.ok(rate.measure(t0 + 25_000) < 200, String(rate.measure(t0 + 25_000)));
    assert.equal(throttleTimeMs(1_500_000, 1_000_000, 10_000), 5000);
  });

  it("a producer at 1 MB/s quota: 10 MB pass at once, then each MB more costs a second", () => {
    const time = new MockTime();
    const q = new ClientQuotas(CONFIG, time);
    q.applyEntityConfig("clients/p", { producer_byte_rate: "1048576" });
    const mb = 1048576;
    let now = time.milliseconds();
    for (let i = 0; i < 10; i++)
      assert.equal(q.produce.maybeRecordAndGetThrottleTimeMs("ANONYMOUS", "p", mb, now), 0);
    assert.equal(q.produce.maybeRecordAndGetThrottleTimeMs("ANONYMOUS", "p", mb, now), 1000);
    // Sending 1 MB each time the throttle ends keeps the client at its quota: ~1 s throttles.
    let sent = 11 * mb;
    const start = now;
    for (let i = 0; i < 30; i++) {
      now += 1000;
      q.produce.maybeRecordAndGetThrottleTimeMs("ANONYMOUS", "p", mb, now);
      sent += mb;
    }
    const rate = sent / ((now - start + 10_000) / 1000);
    assert.ok(Math.abs(rate - mb) / mb < 0.1, String(rate));
  });

  it("request quota: handling time as a percentage, throttle bounded by one window", () => {
    const time = new MockTime();
    const q = new ClientQuotas(CONFIG, time);
    q.applyEntityConfig("users/<default>", { request_percentage: "10" });
    const now = time.milliseconds();
    // 10 % of 10 s = 1 s of handling passes; 5 s more would earn 40 s, bounded to 1 s.
    assert.equal(q.request.maybeRecordRequestTime("ANONYMOUS", "c", 0.9e9, now), 0);
    assert.equal(q.request.maybeRecordRequestTime("ANONYMOUS", "c", 5e9, now), 1000);
  });

  it("a consumer's fetch is capped to its quota × (samples − 1) windows", () => {
    const q = new ClientQuotas(CONFIG, new MockTime());
    assert.equal(q.fetch.getMaxValueInQuotaWindow("ANONYMOUS", "c"), Number.MAX_VALUE);
    q.applyEntityConfig("clients/c", { consumer_byte_rate: "1000" });
    assert.equal(q.fetch.getMaxValueInQuotaWindow("ANONYMOUS", "c"), 10_000);
  });

  it("values print as Java's Double.toString", () => {
    assert.equal(javaDoubleToString(1048576), "1048576.0");
    assert.equal(javaDoubleToString(20_000_000), "2.0E7");
    assert.equal(javaDoubleToString(12.5), "12.5");
  });
});

describe("which requests are client-quota'd (RequestThrottling)", () => {
  const ctx = (principal?: string) =>
    ({ api: Apis.Fetch, apiVersion: 12, clientId: "c", principal }) as unknown as RequestContext;
  const measured = (now: number) => ({
    requestBytes: 100,
    responseBytes: 5_000_000,
    handlingNs: 1000,
    nowMs: now,
  });

  it("a follower's fetch is never throttled; a consumer's over its quota is answered empty with the throttle", () => {
    const time = new MockTime();
    const q = new ClientQuotas(CONFIG, time);
    q.applyEntityConfig("clients/c", { consumer_byte_rate: "100000" });
    const t = new RequestThrottling(q);
    const response = { throttleTimeMs: 0, errorCode: 0, sessionId: 7, responses: [{ topic: "t" }] };
    const now = time.milliseconds();
    assert.equal(
      t.throttle(ctx(), { replicaId: 1, sessionId: 0, sessionEpoch: -1 }, response, measured(now)),
      undefined,
    );
    const d = t.throttle(ctx(), { replicaId: -1, sessionId: 0, sessionEpoch: -1 }, response, measured(now));
    assert.ok(d !== undefined && d.throttleMs > 0);
    assert.deepEqual(d.response, { throttleTimeMs: d.throttleMs, errorCode: 0, sessionId: 0, responses: [] });
    assert.equal(d.clientThrottles, true);
    // The bytes of the response not sent are not counted (unrecordQuotaSensor).
    assert.equal(q.fetch.maybeRecordAndGetThrottleTimeMs("ANONYMOUS", "c", 0, now), 0);
  });

  it("the quota user is the principal's name, sanitized; ANONYMOUS without one", () => {
    const q = new ClientQuotas(CONFIG, new MockTime());
    q.applyEntityConfig("users/CN%3Dbob", { consumer_byte_rate: "1" });
    const t = new RequestThrottling(q);
    assert.equal(t.maxFetchBytes(ctx("User:CN=bob")), 10);
    assert.ok(t.maxFetchBytes(ctx()) >= Number.MAX_SAFE_INTEGER);
  });
});

describe("controller mutation quota (token bucket)", () => {
  it("strict: passes while the bucket is positive, then refuses with the time back to 0; permissive throttles", () => {
    const time = new MockTime();
    const q = new ClientQuotas(CONFIG, time);
    q.applyEntityConfig("clients/c", { controller_mutation_rate: "2" });
    assert.equal(q.controllerMutation.newQuotaFor("ANONYMOUS", "other", true), undefined);
    const strict = q.controllerMutation.newQuotaFor("ANONYMOUS", "c", true)!;
    strict.checkBeforeMutation();
    strict.record(30); // 22 − 30 = −8 tokens
    assert.equal(strict.throttleTime(), 0);
    assert.throws(() => strict.checkBeforeMutation(), /throttling quota has been exceeded/);
    assert.equal(strict.throttleTime(), 4000);
    assert.equal(strict.isExceeded, true);
    time.sleep(1000);
    assert.equal(strict.throttleTime(), 3000);
    // 5 s later the bucket is at +2: a new request passes again.
    time.sleep(4000);
    q.controllerMutation.newQuotaFor("ANONYMOUS", "c", true)!.checkBeforeMutation();
    const permissive = q.controllerMutation.newQuotaFor("ANONYMOUS", "c", false)!;
    permissive.checkBeforeMutation();
    permissive.record(6); // 2 − 6 = −4
    assert.equal(permissive.throttleTime(), 2000);
  });
});
