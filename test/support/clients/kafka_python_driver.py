"""Capture driver for kafka-python. Test-only.

Runs a KafkaAdminClient, one KafkaProducer per produce scenario and a group KafkaConsumer against
the capture server named in the JSON plan given as argv[1], so the server records the request
frames kafka-python sends. Every wait is bounded. Exits non-zero if an expected step fails.

Usage: /usr/bin/python3 kafka_python_driver.py plan.json
"""

import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

TIMEOUT_MS = 10000


def log(msg):
    print(f"[kafka-python] {msg}", file=sys.stderr, flush=True)


def enc(s):
    return None if s is None else s.encode("utf-8")


def run_admin(plan):
    admin = KafkaAdminClient(
        bootstrap_servers=plan["bootstrap"], client_id="capture-kafka-python-admin", request_timeout_ms=TIMEOUT_MS
    )
    a, b = plan["admin"]["topics"]
    admin.create_topics(
        [
            NewTopic(a, num_partitions=2, replication_factor=1, topic_configs={"retention.ms": "3600000"}),
            NewTopic(b, num_partitions=1, replication_factor=1),
        ],
        timeout_ms=5000,
    )
    log(f"list_topics: {sorted(admin.list_topics())}")
    log(f"describe_topics: {[t['topic'] for t in admin.describe_topics([a])]}")
    log(f"describe_cluster: {admin.describe_cluster()['cluster_id']}")
    admin.create_partitions({b: NewPartitions(total_count=2)}, timeout_ms=5000)
    res = admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, a), ConfigResource(ConfigResourceType.BROKER, "0")]
    )
    log(f"describe_configs: {len(res)} responses")
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, a, configs={"retention.ms": "7200000"})])
    admin.delete_topics([b], timeout_ms=5000)
    return admin


def run_producer(plan, scenario):
    kwargs = dict(
        bootstrap_servers=plan["bootstrap"],
        client_id="capture-kafka-python-producer",
        acks="all",
        linger_ms=20,
        request_timeout_ms=TIMEOUT_MS,
    )
    if scenario["compression"] != "none":
        kwargs["compression_type"] = scenario["compression"]
    p = KafkaProducer(**kwargs)
    futures = []
    for r in scenario["records"]:
        headers = [(h["key"], enc(h["value"])) for h in r["headers"]]
        futures.append(
            p.send(scenario["topic"], key=enc(r["key"]), value=enc(r["value"]), headers=headers, partition=0)
        )
    p.flush(timeout=TIMEOUT_MS / 1000)
    for f in futures:
        f.get(timeout=TIMEOUT_MS / 1000)
    p.close(timeout=5)
    log(f"produced {len(scenario['records'])} records to {scenario['topic']} ({scenario['compression']})")


def run_consumer(plan):
    c = plan["consume"]
    consumer = KafkaConsumer(
        bootstrap_servers=plan["bootstrap"],
        client_id="capture-kafka-python-consumer",
        group_id=c["group"],
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        fetch_max_wait_ms=200,
        request_timeout_ms=TIMEOUT_MS + 1000,
    )
    consumer.subscribe([c["topic"]])
    got = 0
    deadline = time.time() + 20
    while got < c["expect"] and time.time() < deadline:
        batch = consumer.poll(timeout_ms=500)
        for records in batch.values():
            got += len(records)
    if got < c["expect"]:
        raise RuntimeError(f"consumed {got} of {c['expect']} records")
    consumer.commit()
    tp = TopicPartition(c["topic"], 0)
    log(f"consumed {got}, committed {consumer.committed(tp)}")
    time.sleep(1.2)  # long enough for a heartbeat or two
    consumer.close()


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    admin = run_admin(plan)
    for scenario in plan["produce"]:
        run_producer(plan, scenario)
    run_consumer(plan)
    group = plan["consume"]["group"]
    log(f"list_consumer_groups: {admin.list_consumer_groups()}")
    log(f"describe_consumer_groups: {[g.group for g in admin.describe_consumer_groups([group])]}")
    log(f"list_consumer_group_offsets: {admin.list_consumer_group_offsets(group)}")
    log(f"delete_consumer_groups: {admin.delete_consumer_groups([group])}")
    admin.close()


if __name__ == "__main__":
    main()
