// The client's SASL settings (security.protocol, sasl.mechanism, sasl.jaas.config) as the producer,
// consumer and tools read them, and the PLAIN mechanism's token (RFC 4616). Each bad setting is one line
// naming the setting (the tools print it as is); the connection-level exchange is tested against real
// brokers in test/server/sasl-plain.test.ts and test/cluster/inter-broker-security.test.ts.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ConfigException, securityFromProperties } from "../../src/client/config-parsing.js";
import { PlainClientMechanism } from "../../src/client/network/sasl/plain-client-mechanism.js";
import { createSaslClientMechanism } from "../../src/client/network/sasl/sasl-client-mechanisms.js";

const PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule";

test("SASL_PLAINTEXT with PLAIN: the credentials from sasl.jaas.config, no TLS", () => {
  const s = securityFromProperties({
    "security.protocol": "sasl_plaintext",
    "sasl.mechanism": "PLAIN",
    "sasl.jaas.config": `${PLAIN} required username="alice" password="a;b c";`,
  });
  assert.equal(s.ssl, undefined);
  assert.deepEqual(s.sasl, { mechanism: "PLAIN", credentials: { username: "alice", password: "a;b c" } });
});

test("SASL_SSL takes the ssl.* settings too; PLAINTEXT and SSL take no SASL", () => {
  const s = securityFromProperties({
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "PLAIN",
    "sasl.jaas.config": `${PLAIN} required username="u" password="p";`,
    "ssl.endpoint.identification.algorithm": "",
  });
  assert.equal(s.ssl?.checkHostName, false);
  assert.equal(s.sasl?.mechanism, "PLAIN");
  assert.deepEqual(securityFromProperties({}), {});
  assert.equal(securityFromProperties({ "security.protocol": "SSL" }).sasl, undefined);
});

test("bad SASL settings are one line naming the setting", () => {
  const bad = (props: Record<string, string>, expected: RegExp): void => {
    assert.throws(
      () => securityFromProperties(props),
      (e: unknown) => e instanceof ConfigException && expected.test(e.message) && !e.message.includes("\n"),
    );
  };
  const sasl = { "security.protocol": "SASL_PLAINTEXT" };
  bad(
    { ...sasl, "sasl.jaas.config": `${PLAIN} required username="u" password="p";` },
    /^Invalid value GSSAPI for configuration sasl\.mechanism: one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 \(GSSAPI is Kafka's default; set sasl\.mechanism\)$/,
  );
  bad(
    { ...sasl, "sasl.mechanism": "PLAIN" },
    /^Missing configuration sasl\.jaas\.config: the PLAIN credentials/,
  );
  bad(
    {
      ...sasl,
      "sasl.mechanism": "PLAIN",
      "sasl.jaas.config":
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";',
    },
    /sasl\.jaas\.config: PLAIN needs the login module org\.apache\.kafka\.common\.security\.plain\.PlainLoginModule, got org\.apache\.kafka\.common\.security\.scram\.ScramLoginModule/,
  );
  bad(
    { ...sasl, "sasl.mechanism": "PLAIN", "sasl.jaas.config": `${PLAIN} required username="u";` },
    /needs username="…" and password="…" options/,
  );
  bad(
    { ...sasl, "sasl.mechanism": "PLAIN", "sasl.jaas.config": `${PLAIN} required username="u" password="p"` },
    /Invalid value for configuration sasl\.jaas\.config: expected ';' at the end/,
  );
  bad(
    { "security.protocol": "SASL" },
    /^Invalid value SASL for configuration security\.protocol: one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL$/,
  );
});

test("PLAIN sends authzid NUL authcid NUL password once and is then complete", () => {
  const m = createSaslClientMechanism({
    mechanism: "PLAIN",
    credentials: { username: "alice", password: "pw" },
  });
  assert.ok(m instanceof PlainClientMechanism);
  assert.equal(m.complete, false);
  assert.deepEqual(m.initialResponse(), Buffer.from("\u0000alice\u0000pw"));
  assert.equal(m.evaluateChallenge(Buffer.alloc(0)), null);
  assert.equal(m.complete, true);
});
