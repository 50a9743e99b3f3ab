"""kafka-python 2.0 driver for the real-broker client tests. Test-only.

Runs one scenario against the broker given on the command line and prints what it observed as one
JSON object on stdout; test/server/clients/kafka-python.test.ts asserts on it. A client error is a
traceback on stderr and a non-zero exit. Every wait is bounded.

Usage: /usr/bin/python3 broker-kafka-python.py <bootstrap> <scenario> [json-args]
Scenarios: admin (create/list/describe/delete topics), roundtrip (producer, then a consumer with
assign + seek_to_beginning and no group).
"""

import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaError

TIMEOUT_MS = 15000


def log(msg):
    print(f"[kafka-python] {msg}", file=sys.stderr, flush=True)


def error_name(e):
    return type(e).__name__


def scenario_admin(bootstrap, args):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kp-test-admin", request_timeout_ms=TIMEOUT_MS)
    out = {}
    res = admin.create_topics(
        [
            NewTopic("kp-admin", num_partitions=3, replication_factor=1, topic_configs={"retention.ms": "3600000"}),
            NewTopic("kp-doomed", num_partitions=2, replication_factor=1),
        ],
        timeout_ms=10000,
    )
    out["create"] = {name: code for name, code, *_ in res.topic_errors}
    try:
        admin.create_topics([NewTopic("kp-admin", num_partitions=3, replication_factor=1)], timeout_ms=10000)
        out["create_again"] = None
    except KafkaError as e:
        out["create_again"] = error_name(e)
    out["topics"] = sorted(t for t in admin.list_topics() if t.startswith("kp-"))
    described = admin.describe_topics(["kp-admin"])
    out["describe"] = [
        {
            "topic": t["topic"],
            "error_code": t["error_code"],
            "partitions": sorted(
                [p["partition"], p["leader"], list(p["replicas"]), list(p["isr"])] for p in t["partitions"]
            ),
        }
        for t in described
    ]
    cluster = admin.describe_cluster()
    out["cluster"] = {
        "cluster_id": cluster.get("cluster_id"),
        "controller_id": cluster.get("controller_id"),
        "brokers": [[b["node_id"], b["host"], b["port"]] for b in cluster.get("brokers", [])],
    }
    res = admin.delete_topics(["kp-doomed"], timeout_ms=10000)
    out["delete"] = {name: code for name, code in res.topic_error_codes}
    time.sleep(0.2)
    out["topics_after_delete"] = sorted(t for t in admin.list_topics() if t.startswith("kp-"))
    admin.close()
    return out


def scenario_roundtrip(bootstrap, args):
    topic = args["topic"]
    count = args["count"]
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kp-test-admin", request_timeout_ms=TIMEOUT_MS)
    res = admin.create_topics([NewTopic(topic, num_partitions=args["partitions"], replication_factor=1)], timeout_ms=10000)
    created = {name: code for name, code, *_ in res.topic_errors}
    admin.close()
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        client_id="kp-test-producer",
        acks=args.get("acks", "all"),
        compression_type=args.get("compression"),
        linger_ms=5,
        request_timeout_ms=TIMEOUT_MS,
    )
    futures = [
        producer.send(topic, key=f"key-{i % 37}".encode(), value=f"v-{i:06d}".encode(), headers=[("i", str(i).encode())])
        for i in range(count)
    ]
    producer.flush(timeout=30)
    acked = []
    for f in futures:
        md = f.get(timeout=30)
        acked.append([md.partition, md.offset])
    producer.close(timeout=10)

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id="kp-test-consumer",
        group_id=None,
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
        request_timeout_ms=TIMEOUT_MS + 5000,
        consumer_timeout_ms=3000,
    )
    partitions = sorted(consumer.partitions_for_topic(topic) or [])
    tps = [TopicPartition(topic, p) for p in partitions]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    ends = consumer.end_offsets(tps)
    msgs = {str(p): [] for p in partitions}
    deadline = time.time() + 30
    while time.time() < deadline and any(consumer.position(tp) < ends[tp] for tp in tps):
        for records in consumer.poll(timeout_ms=500).values():
            for m in records:
                msgs[str(m.partition)].append([m.offset, m.key.decode(), m.value.decode(), {k: v.decode() for k, v in m.headers}])
    # seek on partition 0 to args.seek and read it to the end again
    tp0 = tps[0]
    consumer.seek(tp0, args.get("seek", 0))
    again = []
    deadline = time.time() + 20
    while time.time() < deadline and consumer.position(tp0) < ends[tp0]:
        for tp, records in consumer.poll(timeout_ms=500).items():
            if tp == tp0:
                again.extend(m.offset for m in records)
    consumer.close()
    return {
        "created": created,
        "acked": acked,
        "partitions": partitions,
        "ends": {str(tp.partition): o for tp, o in ends.items()},
        "messages": msgs,
        "after_seek": again,
    }


SCENARIOS = {"admin": scenario_admin, "roundtrip": scenario_roundtrip}


def main():
    bootstrap, scenario = sys.argv[1], sys.argv[2]
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    print(json.dumps(SCENARIOS[scenario](bootstrap, args)))


if __name__ == "__main__":
    main()
