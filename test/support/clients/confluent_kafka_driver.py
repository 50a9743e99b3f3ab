"""Capture driver for confluent-kafka (librdkafka). Test-only.

Runs an AdminClient, one Producer per produce scenario and a group Consumer against the capture
server named in the JSON plan given as argv[1], so the server records the request frames
librdkafka sends. Every wait is bounded. Exits non-zero if an expected step fails.

Usage: /usr/bin/python3 confluent_kafka_driver.py plan.json
"""

import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

TIMEOUT = 10.0


def log(msg):
    print(f"[confluent-kafka] {msg}", file=sys.stderr, flush=True)


def enc(s):
    return None if s is None else s.encode("utf-8")


def wait_all(futures, what):
    for key, fut in futures.items():
        fut.result(timeout=TIMEOUT)
        log(f"{what} {key}: ok")


def run_admin(plan):
    bootstrap = plan["bootstrap"]
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "capture-confluent-admin"})
    a, b = plan["admin"]["topics"]
    wait_all(
        admin.create_topics(
            [
                NewTopic(a, num_partitions=3, replication_factor=1, config={"retention.ms": "3600000"}),
                NewTopic(b, num_partitions=1, replication_factor=1),
            ],
            operation_timeout=5,
            request_timeout=TIMEOUT,
        ),
        "create topic",
    )
    md = admin.list_topics(timeout=TIMEOUT)
    log(f"list_topics: {sorted(md.topics)}")
    wait_all(admin.create_partitions([NewPartitions(b, 2)], request_timeout=TIMEOUT), "create partitions")
    wait_all(
        admin.describe_configs(
            [ConfigResource("topic", a), ConfigResource("broker", "0")], request_timeout=TIMEOUT
        ),
        "describe configs",
    )
    wait_all(
        admin.alter_configs(
            [ConfigResource("topic", a, set_config={"retention.ms": "7200000"})], request_timeout=TIMEOUT
        ),
        "alter configs",
    )
    wait_all(admin.delete_topics([b], operation_timeout=5, request_timeout=TIMEOUT), "delete topic")
    return admin


def run_producer(plan, scenario):
    conf = {
        "bootstrap.servers": plan["bootstrap"],
        "client.id": "capture-confluent-producer",
        "acks": "all",
        "compression.codec": scenario["compression"],
        "linger.ms": 20,
    }
    if scenario.get("idempotent"):
        conf["enable.idempotence"] = True
    if scenario.get("transactionalId"):
        conf["transactional.id"] = scenario["transactionalId"]
    p = Producer(conf)
    failures = []

    def on_delivery(err, msg):
        if err is not None:
            failures.append(str(err))

    if scenario.get("transactionalId"):
        p.init_transactions(TIMEOUT)
        p.begin_transaction()
    for r in scenario["records"]:
        headers = [(h["key"], enc(h["value"])) for h in r["headers"]]
        p.produce(
            scenario["topic"],
            key=enc(r["key"]),
            value=enc(r["value"]),
            headers=headers or None,
            partition=0,
            on_delivery=on_delivery,
        )
    if scenario.get("transactionalId"):
        p.commit_transaction(TIMEOUT)
    left = p.flush(TIMEOUT)
    if left or failures:
        raise RuntimeError(f"produce to {scenario['topic']}: {left} undelivered, errors {failures}")
    log(f"produced {len(scenario['records'])} records to {scenario['topic']} ({scenario['compression']})")


def run_consumer(plan):
    c = plan["consume"]
    consumer = Consumer(
        {
            "bootstrap.servers": plan["bootstrap"],
            "client.id": "capture-confluent-consumer",
            "group.id": c["group"],
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        }
    )
    consumer.subscribe([c["topic"]])
    got = 0
    deadline = time.time() + 20
    while got < c["expect"] and time.time() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        got += 1
    if got < c["expect"]:
        raise RuntimeError(f"consumed {got} of {c['expect']} records")
    consumer.commit(asynchronous=False)
    committed = consumer.committed(consumer.assignment(), timeout=TIMEOUT)
    log(f"consumed {got}, committed {[(tp.topic, tp.partition, tp.offset) for tp in committed]}")
    time.sleep(1.2)  # long enough for a heartbeat or two
    consumer.close()


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    admin = run_admin(plan)
    for scenario in plan["produce"]:
        run_producer(plan, scenario)
    run_consumer(plan)
    groups = admin.list_groups(timeout=TIMEOUT)
    log(f"list_groups: {[g.id for g in groups]}")


if __name__ == "__main__":
    main()
