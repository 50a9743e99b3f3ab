"""Test-only: an exactly-once copier with confluent-kafka (librdkafka), for exactly-once.test.ts.

Consumes INPUT in GROUP (read_committed, static member INSTANCE so a restarted copier takes the killed
one's place at once), upper-cases each value and produces it, with its key, to the same partition of
OUTPUT, and commits the consumed offsets in the same transaction (send_offsets_to_transaction). One
transaction per polled batch. Designed to be SIGKILLed at any moment (by the test, or because the broker
is killed under it): errors that require an abort abort the transaction and rewind the consumer to the
group's committed offsets; retriable errors retry the same step; a fatal error exits with code 3.

Prints one JSON line per event: {"event": "ready"} once the producer is initialised and the partitions are
assigned, {"event": "commit", "n": records} per committed transaction, {"event": "abort", "error": ...}
per aborted one, and {"event": "done", "copied": n, "committed": {partition: offset}} when the group's
committed offsets reached the input's end offsets (the input is not written while the copier runs);
then exits 0. Exits 2 if that is not reached within MAX_S seconds.

Usage: /usr/bin/python3 eos-copier.py BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID INSTANCE MAX_S \
         BATCH WORK_MS
       (BATCH: at most this many records per transaction; WORK_MS: time each transaction spends
       "processing" between its produce and its commit, so that a kill often finds one open)
"""

import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def kafka_error(e):
    return e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None


def main():
    bootstrap, src, dst, group, txn_id, instance = sys.argv[1:7]
    max_s, batch, work_s = float(sys.argv[7]), int(sys.argv[8]), float(sys.argv[9]) / 1000
    deadline = time.time() + max_s
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.instance.id": instance,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "session.timeout.ms": 6000,
            "fetch.wait.max.ms": 100,
        }
    )
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn_id,
            "enable.idempotence": True,
            "transaction.timeout.ms": 10000,
            "linger.ms": 5,
        }
    )

    def retrying(what, op):
        """Runs op(); retries it while it fails with a retriable error (e.g. the broker restarting)."""
        while True:
            try:
                return op()
            except KafkaException as e:
                err = kafka_error(e)
                if err is not None and err.retriable() and time.time() < deadline:
                    print(f"[copier] {what}: retriable {err}; retrying", file=sys.stderr, flush=True)
                    time.sleep(0.2)
                    continue
                raise

    retrying("init_transactions", lambda: producer.init_transactions(30))

    partitions = []
    while not partitions and time.time() < deadline:
        md = consumer.list_topics(src, timeout=10)
        partitions = sorted(md.topics[src].partitions.keys()) if src in md.topics else []
    # The input's end offsets: it is complete before any copier starts.
    ends = {}
    for p in partitions:
        tp = TopicPartition(src, p)
        ends[p] = retrying("watermarks", lambda tp=tp: consumer.get_watermark_offsets(tp, 10))[1]
    consumer.subscribe([src])

    def committed():
        wanted = [TopicPartition(src, p) for p in partitions]
        tps = retrying("committed", lambda: consumer.committed(wanted, 30))
        return {tp.partition: tp.offset for tp in tps}

    def rewind():
        """After an abort: go back to the group's committed offsets (the aborted batch did not move them)."""
        for p, off in committed().items():
            consumer.seek(TopicPartition(src, p, off if off >= 0 else OFFSET_BEGINNING))

    copied = 0
    ready = False
    while time.time() < deadline:
        msgs = [m for m in consumer.consume(batch, 0.3) if m.error() is None]
        if not ready and consumer.assignment():
            ready = True
            emit("ready")
        if not msgs:
            if ready:
                c = committed()
                if all(c.get(p, -1) >= ends[p] for p in partitions):
                    emit("done", copied=copied, committed={str(p): o for p, o in c.items()})
                    consumer.close()
                    return 0
            continue
        try:
            producer.begin_transaction()
            for m in msgs:
                while True:
                    try:
                        producer.produce(dst, key=m.key(), value=m.value().upper(), partition=m.partition())
                        break
                    except BufferError:
                        producer.poll(0.1)
            if work_s > 0:
                # The records reach the log (so a kill now leaves them to be aborted), then the "work".
                started = time.time()
                producer.flush(work_s)
                time.sleep(max(0.0, work_s - (time.time() - started)))
            offsets = {}
            for m in msgs:
                offsets[m.partition()] = m.offset() + 1
            tps = [TopicPartition(src, p, o) for p, o in sorted(offsets.items())]
            retrying(
                "send_offsets_to_transaction",
                lambda: producer.send_offsets_to_transaction(tps, consumer.consumer_group_metadata(), 30),
            )
            retrying("commit_transaction", lambda: producer.commit_transaction(30))
            copied += len(msgs)
            emit("commit", n=len(msgs))
        except KafkaException as e:
            err = kafka_error(e)
            if err is not None and err.fatal():
                print(f"[copier] fatal: {err}", file=sys.stderr, flush=True)
                return 3
            if err is None or not err.txn_requires_abort():
                raise
            emit("abort", error=str(err))
            retrying("abort_transaction", lambda: producer.abort_transaction(30))
            rewind()
    print("[copier] the committed offsets did not reach the input's end in time", file=sys.stderr, flush=True)
    return 2


if __name__ == "__main__":
    sys.exit(main())
