// The Prometheus text writer (common/metrics/exposition.ts) and the registry's merge, checked with the
// strict parser in exposition-parser.ts: escaping round-trips, special values, summaries, and the errors
// for names the format does not allow.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { writeExposition } from "../../../src/common/metrics/exposition.js";
import { MetricsRegistry } from "../../../src/common/metrics/metrics-registry.js";
import { MockTime } from "../../../src/common/time.js";
import { parseExposition, sampleValue } from "./exposition-parser.js";

describe("Prometheus text exposition 0.0.4", () => {
  test("HELP/TYPE lines, label escaping and values round-trip through a strict parser", () => {
    const awkward = 'a "quoted" back\\slash\nnewline';
    const text = writeExposition([
      {
        name: "kafka_server_brokertopicmetrics_messagesin_total",
        help: "Records in\nsecond line \\ backslash",
        type: "counter",
        samples: [{ value: 7 }, { labels: { topic: awkward }, value: 3 }],
      },
      {
        name: "g",
        help: "special values",
        type: "gauge",
        samples: [
          { labels: { v: "inf" }, value: Number.POSITIVE_INFINITY },
          { labels: { v: "-inf" }, value: Number.NEGATIVE_INFINITY },
          { labels: { v: "nan" }, value: Number.NaN },
          { labels: { v: "small" }, value: 1.5e-7 },
        ],
      },
      {
        name: "kafka_network_requestmetrics_totaltimems",
        help: "latency",
        type: "summary",
        samples: [
          { labels: { request: "Produce", quantile: "0.99" }, value: 2.5 },
          { suffix: "_sum", labels: { request: "Produce" }, value: 10 },
          { suffix: "_count", labels: { request: "Produce" }, value: 4 },
        ],
      },
    ]);
    assert.match(
      text,
      /^# HELP kafka_server_brokertopicmetrics_messagesin_total Records in\\nsecond line \\\\ backslash\n/,
    );
    assert.ok(text.includes('{topic="a \\"quoted\\" back\\\\slash\\nnewline"} 3\n'), text);
    const parsed = parseExposition(text);
    assert.equal(
      parsed.get("kafka_server_brokertopicmetrics_messagesin_total")?.help,
      "Records in\nsecond line \\ backslash",
    );
    assert.equal(
      sampleValue(parsed, "kafka_server_brokertopicmetrics_messagesin_total", { topic: awkward }),
      3,
    );
    assert.equal(sampleValue(parsed, "kafka_server_brokertopicmetrics_messagesin_total"), 7);
    assert.equal(sampleValue(parsed, "g", { v: "inf" }), Number.POSITIVE_INFINITY);
    assert.equal(sampleValue(parsed, "g", { v: "-inf" }), Number.NEGATIVE_INFINITY);
    assert.ok(Number.isNaN(sampleValue(parsed, "g", { v: "nan" })));
    assert.equal(sampleValue(parsed, "g", { v: "small" }), 1.5e-7);
    assert.equal(
      sampleValue(parsed, "kafka_network_requestmetrics_totaltimems_count", { request: "Produce" }),
      4,
    );
  });

  test("the parser is strict: it rejects what the format does not allow", () => {
    const bad = [
      "x 1\n", // no TYPE
      '# TYPE x counter\nx{a="b" 1\n',
      '# TYPE x counter\nx{a="\\t"} 1\n',
      "# TYPE x counter\ny 1\n",
      "# TYPE x counter\nx 1\nx 2\n",
      "# TYPE x counter\nx one\n",
      "# TYPE x counter\nx 1",
      "# TYPE x counter\n\nx 1\n",
      "# TYPE x summary\nx 1\n",
    ];
    for (const t of bad) assert.throws(() => parseExposition(t), Error, JSON.stringify(t));
  });

  test("invalid metric and label names are refused by the writer", () => {
    assert.throws(
      () => writeExposition([{ name: "bad-name", help: "", type: "gauge", samples: [] }]),
      /metric name/,
    );
    assert.throws(
      () =>
        writeExposition([
          { name: "ok", help: "", type: "gauge", samples: [{ labels: { "a-b": "x" }, value: 1 }] },
        ]),
      /label name/,
    );
  });

  test("the registry merges families of the same name from several collectors", () => {
    const r = new MetricsRegistry(new MockTime());
    r.register(() => [{ name: "m", help: "h", type: "gauge", samples: [{ labels: { a: "1" }, value: 1 }] }]);
    r.register(() => [{ name: "m", help: "h", type: "gauge", samples: [{ labels: { a: "2" }, value: 2 }] }]);
    const parsed = parseExposition(r.scrape());
    assert.equal(parsed.get("m")?.samples.length, 2);
    r.register(() => [{ name: "m", help: "h", type: "counter", samples: [] }]);
    assert.throws(() => r.scrape(), /collected as gauge and counter/);
  });
});
