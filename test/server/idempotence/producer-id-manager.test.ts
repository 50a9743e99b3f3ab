// ProducerIdManager over the real embedded metadata store: ids in order from blocks of 1000, a new block
// claimed when one is used up, two managers (two brokers) sharing the store never hand out the same id
// (compare-and-set on /latest_producer_id_block), and concurrent calls on one manager stay distinct.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SYSTEM_TIME } from "../../../src/common/time.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import {
  PRODUCER_ID_BLOCK_PATH,
  ProducerIdManager,
  parseProducerIdBlock,
} from "../../../src/server/producer-id-manager.js";

test("blocks of 1000, claimed with compare-and-set, never overlap between brokers", async () => {
  const dir = mkdtempSync(join(tmpdir(), "producer-id-manager-"));
  const store = await EmbeddedMetadataStore.open(dir, SYSTEM_TIME);
  try {
    const a = new ProducerIdManager(1, store);
    const b = new ProducerIdManager(2, store);
    assert.equal(await a.generateProducerId(), 0n);
    assert.equal(await b.generateProducerId(), 1000n);
    assert.equal(await a.generateProducerId(), 1n);
    const node = await store.get(PRODUCER_ID_BLOCK_PATH);
    assert.deepEqual(JSON.parse(node!.data.toString("utf8")), {
      version: 1,
      broker: 2,
      block_start: "1000",
      block_end: "1999",
    });
    assert.equal(
      node!.data.toString("utf8"),
      '{"version":1,"broker":2,"block_start":"1000","block_end":"1999"}',
    );
    // Concurrent requests on both managers: all distinct, a's next block after b's.
    const ids = await Promise.all([
      ...Array.from({ length: 1200 }, () => a.generateProducerId()),
      ...Array.from({ length: 50 }, () => b.generateProducerId()),
    ]);
    assert.equal(new Set(ids.map(String)).size, ids.length);
    const fromA = ids.slice(0, 1200);
    assert.deepEqual(fromA.slice(0, 3), [2n, 3n, 4n]);
    assert.equal(fromA[998], 1000n + 1000n); // a used up 0..999 and claimed 2000..2999
    assert.deepEqual(parseProducerIdBlock((await store.get(PRODUCER_ID_BLOCK_PATH))!.data), {
      assignedBrokerId: 1,
      firstProducerId: 2000n,
      size: 1000n,
    });
    // Two brokers claiming at the same moment: both read the same znode version, one compare-and-set
    // fails and that broker claims the block after.
    const [c, d] = await Promise.all([
      new ProducerIdManager(3, store).generateProducerId(),
      new ProducerIdManager(4, store).generateProducerId(),
    ]);
    assert.deepEqual(
      [c, d].sort((x, y) => Number(x - y)),
      [3000n, 4000n],
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
