"""confluent-kafka (librdkafka) driver for the real-broker client tests. Test-only.

Runs one scenario against the broker given on the command line and prints what it observed as one
JSON object on stdout; test/server/clients/confluent-kafka.test.ts asserts on it. A client error is a
traceback on stderr and a non-zero exit. Every wait is bounded.

Usage: /usr/bin/python3 broker-confluent-kafka.py <bootstrap> <scenario> [json-args]
Scenarios: admin, create, produce, consume, offsets, tail (prints messages until SIGTERM).

The Debian binding is confluent-kafka 1.7 (over librdkafka 2.0): its AdminClient has no
delete_records and no list_offsets, so offsets are listed through the Consumer (get_watermark_offsets,
offsets_for_times: ListOffsets earliest/latest/by time) and DeleteRecords is sent by the test with
another client, this driver then checking the new low watermark.
"""

import json
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

TIMEOUT = 15.0


def log(msg):
    print(f"[confluent-kafka] {msg}", file=sys.stderr, flush=True)


def wait_all(futures):
    """{key: None or error name} for a dict of futures."""
    out = {}
    for key, fut in futures.items():
        try:
            fut.result(timeout=TIMEOUT)
            out[str(key)] = None
        except KafkaException as e:
            err = e.args[0]
            out[str(key)] = err.name() if isinstance(err, KafkaError) else str(err)
    return out


def topic_partitions(admin, names):
    md = admin.list_topics(timeout=TIMEOUT)
    return {n: (sorted(md.topics[n].partitions) if n in md.topics else None) for n in names}


def describe_topic(admin, name):
    res = wait_all_results(admin.describe_configs([ConfigResource("topic", name)], request_timeout=TIMEOUT))
    entries = next(iter(res.values()))
    return {
        k: {"value": v.value, "source": v.source, "is_default": v.is_default, "read_only": v.is_read_only}
        for k, v in entries.items()
    }


def wait_all_results(futures):
    return {str(k): f.result(timeout=TIMEOUT) for k, f in futures.items()}


def scenario_admin(bootstrap, args):
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "cf-test-admin"})
    out = {}
    out["create"] = wait_all(
        admin.create_topics(
            [
                NewTopic("cf-admin", num_partitions=3, replication_factor=1, config={"retention.ms": "3600000"}),
                NewTopic("cf-grow", num_partitions=1, replication_factor=1),
                NewTopic("cf-doomed", num_partitions=2, replication_factor=1),
            ],
            operation_timeout=10,
            request_timeout=TIMEOUT,
        )
    )
    out["create_again"] = wait_all(
        admin.create_topics([NewTopic("cf-admin", num_partitions=3, replication_factor=1)], request_timeout=TIMEOUT)
    )
    out["create_validate_only"] = wait_all(
        admin.create_topics(
            [NewTopic("cf-validate-only", num_partitions=2, replication_factor=1)],
            validate_only=True,
            request_timeout=TIMEOUT,
        )
    )
    out["partitions_after_create"] = topic_partitions(admin, ["cf-admin", "cf-grow", "cf-doomed", "cf-validate-only"])

    md = admin.list_topics(timeout=TIMEOUT)
    out["brokers"] = {str(b.id): f"{b.host}:{b.port}" for b in md.brokers.values()}
    out["cluster_id"] = md.cluster_id
    out["controller_id"] = md.controller_id
    out["leaders"] = {str(p.id): [p.leader, list(p.replicas), list(p.isrs)] for p in md.topics["cf-admin"].partitions.values()}

    out["configs_before"] = describe_topic(admin, "cf-admin")
    out["alter"] = wait_all(
        admin.alter_configs(
            [ConfigResource("topic", "cf-admin", set_config={"retention.ms": "7200000", "cleanup.policy": "compact"})],
            request_timeout=TIMEOUT,
        )
    )
    out["configs_after"] = describe_topic(admin, "cf-admin")
    broker_cfg = wait_all_results(admin.describe_configs([ConfigResource("broker", "0")], request_timeout=TIMEOUT))
    out["broker_configs"] = {k: v.value for k, v in next(iter(broker_cfg.values())).items()}

    out["create_partitions"] = wait_all(admin.create_partitions([NewPartitions("cf-grow", 4)], request_timeout=TIMEOUT))
    out["create_partitions_shrink"] = wait_all(
        admin.create_partitions([NewPartitions("cf-grow", 2)], request_timeout=TIMEOUT)
    )
    out["partitions_after_grow"] = topic_partitions(admin, ["cf-grow"])

    out["delete"] = wait_all(admin.delete_topics(["cf-doomed"], operation_timeout=10, request_timeout=TIMEOUT))
    out["delete_unknown"] = wait_all(admin.delete_topics(["cf-never-was"], request_timeout=TIMEOUT))
    time.sleep(0.2)
    out["topics_after_delete"] = sorted(t for t in admin.list_topics(timeout=TIMEOUT).topics if t.startswith("cf-"))
    return out


def scenario_create(bootstrap, args):
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "cf-test-admin"})
    topics = [NewTopic(t["name"], num_partitions=t["partitions"], replication_factor=1) for t in args["topics"]]
    return {"create": wait_all(admin.create_topics(topics, operation_timeout=10, request_timeout=TIMEOUT))}


def scenario_produce(bootstrap, args):
    """Produces args.count keyed messages to args.topic with acks=all and args.compression."""
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "cf-test-producer",
            "acks": "all",
            "compression.codec": args.get("compression", "none"),
            "linger.ms": 5,
            "enable.idempotence": bool(args.get("idempotent", False)),
        }
    )
    acked = []
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked.append([msg.partition(), msg.offset()])

    topic = args["topic"]
    for i in range(args["count"]):
        while True:
            try:
                p.produce(
                    topic,
                    key=f"key-{i % 101}".encode(),
                    value=f"{args.get('prefix', 'v')}-{i:06d}".encode(),
                    headers=[("i", str(i).encode())],
                    on_delivery=on_delivery,
                )
                break
            except BufferError:
                p.poll(0.1)
    left = p.flush(TIMEOUT)
    return {"acked": len(acked), "undelivered": left, "errors": errors[:10], "offsets": acked}


def scenario_consume(bootstrap, args):
    """Assigns every partition of args.topic from the beginning and reads up to the high watermark;
    then seeks partition 0 to args.seek and reads it again."""
    topic = args["topic"]
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "cf-test-consumer",
            # The Python binding wants a group.id even for assign(); no group is joined.
            "group.id": "cf-test-unused",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "error",
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 100,
        }
    )
    md = c.list_topics(topic, timeout=TIMEOUT)
    partitions = sorted(md.topics[topic].partitions)
    marks = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=TIMEOUT, cached=False) for p in partitions}
    c.assign([TopicPartition(topic, p, marks[p][0]) for p in partitions])
    msgs = {str(p): [] for p in partitions}
    eof = set(p for p in partitions if marks[p][1] == marks[p][0])
    deadline = time.time() + 30
    while len(eof) < len(partitions) and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                if m.offset() >= marks[m.partition()][1]:
                    eof.add(m.partition())
                continue
            raise KafkaException(m.error())
        msgs[str(m.partition())].append([m.offset(), m.key().decode(), m.value().decode(), {k: v.decode() for k, v in (m.headers() or [])}])
    # Seek back on partition 0 and read from there to the end again.
    seek = args.get("seek", 0)
    p0 = partitions[0]
    c.seek(TopicPartition(topic, p0, seek))
    again = []
    deadline = time.time() + 20
    while time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                if m.partition() == p0 and m.offset() >= marks[p0][1]:
                    break
                continue
            raise KafkaException(m.error())
        if m.partition() == p0:
            again.append(m.offset())
    c.close()
    return {
        "watermarks": {str(p): list(v) for p, v in marks.items()},
        "messages": msgs,
        "timed_out": len(eof) < len(partitions),
        "after_seek": again,
    }


def scenario_offsets(bootstrap, args):
    """ListOffsets through the consumer: watermarks and offsets for times."""
    topic = args["topic"]
    c = Consumer({"bootstrap.servers": bootstrap, "client.id": "cf-test-offsets", "group.id": "cf-test-unused"})
    md = c.list_topics(topic, timeout=TIMEOUT)
    partitions = sorted(md.topics[topic].partitions)
    out = {"watermarks": {}, "for_times": {}}
    for p in partitions:
        out["watermarks"][str(p)] = list(c.get_watermark_offsets(TopicPartition(topic, p), timeout=TIMEOUT, cached=False))
    for ts in args.get("times", []):
        res = c.offsets_for_times([TopicPartition(topic, p, ts) for p in partitions], timeout=TIMEOUT)
        out["for_times"][str(ts)] = {str(tp.partition): tp.offset for tp in res}
    c.close()
    return out


def scenario_tail(bootstrap, args):
    """Assigns every partition of args.topic from the beginning and prints each message as one line,
    partition TAB offset TAB value, flushed, until SIGTERM; librdkafka reconnects across broker restarts."""
    topic = args["topic"]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "cf-test-tail",
            "group.id": "cf-test-unused",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "fetch.wait.max.ms": 100,
            "reconnect.backoff.max.ms": 500,
        }
    )
    md = c.list_topics(topic, timeout=TIMEOUT)
    c.assign([TopicPartition(topic, p, 0) for p in sorted(md.topics[topic].partitions)])
    while not stop:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            log(f"tail: {m.error()}")
            continue
        sys.stdout.write(f"{m.partition()}\t{m.offset()}\t{m.value().decode()}\n")
        sys.stdout.flush()
    c.close()
    return None


SCENARIOS = {
    "admin": scenario_admin,
    "create": scenario_create,
    "produce": scenario_produce,
    "consume": scenario_consume,
    "offsets": scenario_offsets,
    "tail": scenario_tail,
}


def main():
    bootstrap, scenario = sys.argv[1], sys.argv[2]
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    result = SCENARIOS[scenario](bootstrap, args)
    if result is not None:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
