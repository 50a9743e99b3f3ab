// ProducerIdManager: hands out producer ids for InitProducerId (Kafka's ZkProducerIdManager). Ids come in
// blocks of 1000 claimed from the metadata store at `/latest_producer_id_block`, whose JSON is Kafka's
// ProducerIdBlockZNode: {"version":1,"broker":<id>,"block_start":"<first>","block_end":"<last>"}. A block
// is claimed with a compare-and-set on the znode's version (another broker claiming at the same time
// makes it re-read and try the next block), so no two brokers ever hand out the same id. Ids are handed
// out in order; a new block is claimed when the current one is used up. Requests are served one at a
// time (a promise chain), so concurrent InitProducerIds never claim two blocks for one id.

import { Logger } from "../common/logger.js";
import { KafkaError } from "../protocol/errors.js";
import {
  BadVersionError,
  jsonBytes,
  type MetadataStore,
  NodeExistsError,
  parseJson,
} from "./metadata/metadata-store.js";

export const PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block";
/** Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE. */
export const PRODUCER_ID_BLOCK_SIZE = 1000n;
const LONG_MAX = 9223372036854775807n;

/** A block of producer ids assigned to a broker (Kafka's ProducerIdsBlock). */
export interface ProducerIdsBlock {
  assignedBrokerId: number;
  firstProducerId: bigint;
  size: bigint;
}

export function lastProducerId(b: ProducerIdsBlock): bigint {
  return b.firstProducerId + b.size - 1n;
}

/** Kafka's ProducerIdBlockZNode.generateProducerIdBlockJson. */
export function producerIdBlockJson(b: ProducerIdsBlock): Buffer {
  return jsonBytes({
    version: 1,
    broker: b.assignedBrokerId,
    block_start: b.firstProducerId.toString(),
    block_end: lastProducerId(b).toString(),
  });
}

/** Kafka's ProducerIdBlockZNode.parseProducerIdBlockData. */
export function parseProducerIdBlock(data: Buffer): ProducerIdsBlock {
  const v = parseJson(PRODUCER_ID_BLOCK_PATH, data) as Record<string, unknown>;
  const start = BigInt(String(v.block_start));
  const end = BigInt(String(v.block_end));
  if (typeof v.broker !== "number" || end < start)
    throw new Error(`invalid producer id block in ${PRODUCER_ID_BLOCK_PATH}: ${data.toString("utf8")}`);
  return { assignedBrokerId: v.broker, firstProducerId: start, size: end - start + 1n };
}

export class ProducerIdManager {
  private block: ProducerIdsBlock | undefined;
  private nextProducerId = 0n;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly logger = new Logger("kafka.coordinator.transaction.ProducerIdManager", "");

  constructor(
    readonly brokerId: number,
    private readonly store: MetadataStore,
  ) {}

  /** The next producer id (claims a new block when needed). Throws KafkaError when ids are exhausted. */
  generateProducerId(): Promise<bigint> {
    const next = this.chain.then(() => this.nextId());
    this.chain = next.catch(() => {});
    return next;
  }

  private async nextId(): Promise<bigint> {
    if (this.block === undefined || this.nextProducerId > lastProducerId(this.block)) {
      this.block = await this.claimNewBlock();
      this.nextProducerId = this.block.firstProducerId;
    }
    return this.nextProducerId++;
  }

  /** Kafka's ZkProducerIdManager.getNewProducerIdBlock: read, compute the next block, compare-and-set. */
  private async claimNewBlock(): Promise<ProducerIdsBlock> {
    for (;;) {
      const current = await this.store.get(PRODUCER_ID_BLOCK_PATH);
      let first = 0n;
      if (current !== undefined && current.data.length > 0) {
        const block = parseProducerIdBlock(current.data);
        if (lastProducerId(block) > LONG_MAX - PRODUCER_ID_BLOCK_SIZE)
          throw new KafkaError("UNKNOWN_SERVER_ERROR", "Have exhausted all producerIds.");
        first = lastProducerId(block) + 1n;
      }
      const block: ProducerIdsBlock = {
        assignedBrokerId: this.brokerId,
        firstProducerId: first,
        size: PRODUCER_ID_BLOCK_SIZE,
      };
      const data = producerIdBlockJson(block);
      try {
        if (current === undefined) await this.store.create(PRODUCER_ID_BLOCK_PATH, data);
        else await this.store.set(PRODUCER_ID_BLOCK_PATH, data, current.stat.version);
      } catch (e) {
        if (e instanceof BadVersionError || e instanceof NodeExistsError) continue;
        throw e;
      }
      this.logger.info(
        `Acquired new producerId block ProducerIdsBlock(assignedBrokerId=${block.assignedBrokerId}, firstProducerId=${block.firstProducerId}, size=${block.size}) by writing to Zk with path version ${current === undefined ? 0 : current.stat.version + 1}`,
      );
      return block;
    }
  }
}
