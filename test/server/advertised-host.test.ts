// What a listener without a host advertises (src/server/advertised-host.ts), with this machine's real
// resolver and interfaces: a name that resolves only to addresses of this machine (loopback, an
// interface's) is kept, as Kafka keeps its host name; a name that does not resolve, or resolves to another
// machine, gives localhost and the reason.

import assert from "node:assert/strict";
import { networkInterfaces } from "node:os";
import { test } from "node:test";
import { defaultAdvertisedHost, FALLBACK_ADVERTISED_HOST } from "../../src/server/advertised-host.js";

const interfaceAddresses = Object.values(networkInterfaces())
  .flat()
  .filter((i) => i !== undefined);

test("names and addresses of this machine are advertised as they are", async () => {
  for (const name of ["localhost", "127.0.0.1", "::1"]) {
    assert.deepEqual(await defaultAdvertisedHost(name), { host: name }, name);
  }
  const external = interfaceAddresses.find((i) => !i.internal && i.family === "IPv4");
  if (external !== undefined)
    assert.deepEqual(await defaultAdvertisedHost(external.address), { host: external.address });
});

test("a name that does not resolve, or resolves to another machine, gives localhost and says why", async () => {
  const missing = await defaultAdvertisedHost("no-such-host.invalid");
  assert.equal(missing.host, FALLBACK_ADVERTISED_HOST);
  assert.match(
    missing.fallbackReason ?? "",
    /^the host name 'no-such-host\.invalid' does not resolve \(\w+\)$/,
  );
  // A documentation address (RFC 5737) that is not one of this machine's.
  const own = new Set(interfaceAddresses.map((i) => i.address));
  const foreign = ["192.0.2.1", "198.51.100.1", "203.0.113.1"].find((a) => !own.has(a))!;
  assert.deepEqual(await defaultAdvertisedHost(foreign), {
    host: FALLBACK_ADVERTISED_HOST,
    fallbackReason: `the host name '${foreign}' resolves to ${foreign}, not an address of this machine`,
  });
});
