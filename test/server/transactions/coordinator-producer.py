"""Test-only: a confluent-kafka (librdkafka) transactional producer against the transaction coordinator.

Modes (argv: BOOTSTRAP TOPIC TRANSACTIONAL_ID MODE):
  commit-abort  init_transactions; a committed transaction (values c1-<i>), an aborted one (a1-<i>), a
                second committed one (c2-<i>), each produced round-robin to the topic's 3 partitions.
  fence         producer 1 begins a transaction (f1-<i>); producer 2 with the same transactional.id calls
                init_transactions (the coordinator aborts producer 1's transaction), commits f2-<i>; then
                producer 1 produces and commits: that must fail with the fencing error.
Prints one JSON line: what happened. Every wait is bounded; exits non-zero on an unexpected failure.
"""

import json
import sys

from confluent_kafka import KafkaException, Producer

TIMEOUT = 30.0
N = 6


def log(msg):
    print(f"[coordinator-producer] {msg}", file=sys.stderr, flush=True)


def producer(bootstrap, txn_id):
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn_id,
            "transaction.timeout.ms": 60000,
            "enable.idempotence": True,
            "linger.ms": 5,
        }
    )


def produce_all(p, topic, prefix):
    for i in range(N):
        p.produce(topic, value=f"{prefix}-{i}".encode(), partition=i % 3)
    p.flush(TIMEOUT)


def commit_abort(bootstrap, topic, txn_id):
    p = producer(bootstrap, txn_id)
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    produce_all(p, topic, "c1")
    p.commit_transaction(TIMEOUT)
    log("c1 committed")
    p.begin_transaction()
    produce_all(p, topic, "a1")
    p.abort_transaction(TIMEOUT)
    log("a1 aborted")
    p.begin_transaction()
    produce_all(p, topic, "c2")
    p.commit_transaction(TIMEOUT)
    log("c2 committed")
    return {"ok": True}


def fence(bootstrap, topic, txn_id):
    p1 = producer(bootstrap, txn_id)
    p1.init_transactions(TIMEOUT)
    p1.begin_transaction()
    produce_all(p1, topic, "f1")
    log("producer 1 has an open transaction")
    p2 = producer(bootstrap, txn_id)
    p2.init_transactions(TIMEOUT)
    p2.begin_transaction()
    produce_all(p2, topic, "f2")
    p2.commit_transaction(TIMEOUT)
    log("producer 2 committed")
    error = None
    try:
        p1.produce(topic, value=b"f1-late", partition=0)
        p1.flush(10)
        p1.commit_transaction(TIMEOUT)
    except KafkaException as e:
        err = e.args[0]
        error = {"name": err.name(), "fatal": err.fatal(), "str": err.str()}
        log(f"producer 1: {error}")
    return {"ok": True, "fencedError": error}


def main():
    bootstrap, topic, txn_id, mode = sys.argv[1:5]
    result = commit_abort(bootstrap, topic, txn_id) if mode == "commit-abort" else fence(bootstrap, topic, txn_id)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
