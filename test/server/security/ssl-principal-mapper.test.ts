// ssl.principal.mapping.rules as Kafka's SslPrincipalMapper: DEFAULT, RULE:pattern/replacement/[LU],
// rules tried in order, a DN no rule matches refused; RFC 2253 DNs from Node's certificate subjects.

import assert from "node:assert/strict";
import { test } from "node:test";
import { rfc2253, SslPrincipalMapper } from "../../../src/server/security/ssl-principal-mapper.js";

test("rules map a DN as Kafka's do", () => {
  const m = SslPrincipalMapper.fromRules(
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U, DEFAULT",
  );
  assert.equal(m.getName("CN=Kafka-Client,OU=ServiceUsers,O=Org,C=US"), "kafka-client");
  assert.equal(m.getName("CN=duke,OU=JavaSoft,O=Sun,L=Palo Alto,ST=CA,C=US"), "DUKE@JAVASOFT");
  assert.equal(m.getName("CN=other,O=x"), "CN=other,O=x");
  assert.equal(SslPrincipalMapper.fromRules("DEFAULT").getName("CN=a"), "CN=a");
  assert.equal(SslPrincipalMapper.fromRules("").getName("CN=a"), "CN=a");
  assert.throws(
    () => SslPrincipalMapper.fromRules("RULE:^CN=(.*)$/$1/L").getName("OU=x"),
    /No rules apply to OU=x/,
  );
  assert.throws(() => SslPrincipalMapper.fromRules("garbage"), /Invalid rule: garbage/);
});

test("RFC 2253 from a certificate subject", () => {
  assert.equal(rfc2253("C=US\nO=Example, Inc\nCN=alice"), "CN=alice,O=Example\\, Inc,C=US");
});
