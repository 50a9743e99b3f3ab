"""Group consumer driver for the consumer-group tests (test/server/groups/). Test-only.

One process is one group member, either a confluent-kafka (librdkafka) Consumer or a kafka-python
KafkaConsumer, subscribed to one topic with a chosen assignor. Every wait is bounded.

Usage: /usr/bin/python3 group_consumer.py <bootstrap> <command> <json-args>
Commands:
  consume  join the group, read exactly args.expect records, commit them (args.commit: "sync",
           "async" or "auto"), poll args.linger_ms more to show nothing else arrives, leave the group;
           prints one JSON object: {"assigned", "records": [[partition, offset, value]], "extra",
           "committed": {partition: offset}} (committed as the client reads it back).
  member   join the group and consume and commit (synchronously, after every poll that returned
           records) until SIGTERM, then leave the group. Prints JSON lines as they happen:
           {"event": "assigned", "generation", "member_id", "partitions"} (generation and member id are
           kafka-python's; null for confluent-kafka), {"event": "revoked", "partitions"},
           {"event": "commit", "offsets": {partition: offset}}, {"event": "commit_failed", "error"},
           {"event": "closed"}.
  offsets  kafka-python KafkaAdminClient.list_consumer_group_offsets for each of args.groups:
           {group: {topic: {partition: offset}}}.
"""

import json
import signal
import sys
import time

TIMEOUT_S = 30.0


def log(msg):
    print(f"[group_consumer] {msg}", file=sys.stderr, flush=True)


def emit(obj):
    print(json.dumps(obj), flush=True)


# ---- confluent-kafka -------------------------------------------------------------------------------


def confluent_consumer(bootstrap, args, on_commit=None):
    from confluent_kafka import Consumer

    conf = {
        "bootstrap.servers": bootstrap,
        "client.id": args["client_id"],
        "group.id": args["group"],
        "auto.offset.reset": "earliest",
        "enable.auto.commit": args.get("commit") == "auto",
        "auto.commit.interval.ms": 200,
        "session.timeout.ms": args.get("session_timeout_ms", 6000),
        "heartbeat.interval.ms": args.get("heartbeat_interval_ms", 500),
        "partition.assignment.strategy": args.get("assignor", "range"),
        "fetch.wait.max.ms": 100,
        "topic.metadata.refresh.interval.ms": 1000,
    }
    if on_commit is not None:
        conf["on_commit"] = on_commit
    return Consumer(conf)


def confluent_consume(bootstrap, args):
    from confluent_kafka import KafkaError, TopicPartition

    commits = []

    def on_commit(err, partitions):
        commits.append((err, [(p.partition, p.offset) for p in partitions]))

    c = confluent_consumer(bootstrap, args, on_commit)
    assigned = []

    def on_assign(consumer, partitions):
        assigned.extend(p.partition for p in partitions)

    c.subscribe([args["topic"]], on_assign=on_assign)
    records = []
    deadline = time.time() + TIMEOUT_S
    while len(records) < args["expect"]:
        if time.time() > deadline:
            raise RuntimeError(f"read {len(records)} of {args['expect']} records")
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise RuntimeError(str(m.error()))
        records.append([m.partition(), m.offset(), m.value().decode()])
    mode = args["commit"]
    extra = []
    if mode == "sync":
        c.commit(asynchronous=False)
    elif mode == "async":
        c.commit(asynchronous=True)
        # The application's part of an async commit: keep polling until the callback has run.
        while not commits:
            if time.time() > deadline:
                raise RuntimeError("no commit callback")
            m = c.poll(0.1)
            if m is not None and not m.error():
                extra.append([m.partition(), m.offset(), m.value().decode()])
        if commits[0][0] is not None:
            raise RuntimeError(f"async commit failed: {commits[0][0]}")
    end = time.time() + args.get("linger_ms", 500) / 1000
    while time.time() < end:
        m = c.poll(0.1)
        if m is not None and not m.error():
            extra.append([m.partition(), m.offset(), m.value().decode()])
    tps = [TopicPartition(args["topic"], p) for p in sorted(assigned)]
    # With enable.auto.commit the offsets are committed by the interval timer and on close(); read
    # them back after close with a second, non-joining consumer.
    c.close()
    probe = confluent_consumer(bootstrap, dict(args, client_id=args["client_id"] + "-probe", commit="sync"))
    committed = {str(tp.partition): tp.offset for tp in probe.committed(tps, timeout=TIMEOUT_S)}
    probe.close()
    return {"assigned": sorted(assigned), "records": records, "extra": extra, "committed": committed}


# ---- kafka-python ----------------------------------------------------------------------------------


def kafka_python_consumer(bootstrap, args):
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[
        args.get("assignor", "range")
    ]
    return KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id=args["client_id"],
        group_id=args["group"],
        auto_offset_reset="earliest",
        enable_auto_commit=args.get("commit") == "auto",
        auto_commit_interval_ms=200,
        session_timeout_ms=args.get("session_timeout_ms", 6000),
        heartbeat_interval_ms=args.get("heartbeat_interval_ms", 500),
        partition_assignment_strategy=[assignor],
        fetch_max_wait_ms=100,
        metadata_max_age_ms=1000,
        request_timeout_ms=args.get("session_timeout_ms", 6000) + 5000,
    )


def kafka_python_consume(bootstrap, args):
    from kafka import TopicPartition

    c = kafka_python_consumer(bootstrap, args)
    c.subscribe([args["topic"]])
    records = []
    deadline = time.time() + TIMEOUT_S
    while len(records) < args["expect"]:
        if time.time() > deadline:
            raise RuntimeError(f"read {len(records)} of {args['expect']} records")
        for batch in c.poll(timeout_ms=200, max_records=args["expect"] - len(records)).values():
            records.extend([m.partition, m.offset, m.value.decode()] for m in batch)
    if args["commit"] == "sync":
        c.commit()
    elif args["commit"] == "async":
        done = []
        c.commit_async(callback=lambda offsets, response: done.append(response))
        while not done:
            if time.time() > deadline:
                raise RuntimeError("no commit callback")
            c.poll(timeout_ms=100, max_records=1)
    extra = []
    end = time.time() + args.get("linger_ms", 500) / 1000
    while time.time() < end:
        for batch in c.poll(timeout_ms=100).values():
            extra.extend([m.partition, m.offset, m.value.decode()] for m in batch)
    assigned = sorted(tp.partition for tp in c.assignment())
    committed = {str(p): c.committed(TopicPartition(args["topic"], p)) for p in assigned}
    c.close()
    return {"assigned": assigned, "records": records, "extra": extra, "committed": committed}


# ---- long-running member ---------------------------------------------------------------------------


class Stop:
    requested = False


def on_sigterm(_sig, _frame):
    Stop.requested = True


def run_member(bootstrap, args):
    signal.signal(signal.SIGTERM, on_sigterm)
    if args["client"] == "confluent-kafka":
        confluent_member(bootstrap, args)
    else:
        kafka_python_member(bootstrap, args)
    emit({"event": "closed"})


def confluent_member(bootstrap, args):
    from confluent_kafka import KafkaError, KafkaException

    c = confluent_consumer(bootstrap, dict(args, commit="sync"))

    def on_assign(consumer, partitions):
        emit(
            {
                "event": "assigned",
                "generation": None,
                "member_id": None,
                "partitions": sorted(p.partition for p in partitions),
            }
        )

    def on_revoke(consumer, partitions):
        emit({"event": "revoked", "partitions": sorted(p.partition for p in partitions)})

    c.subscribe([args["topic"]], on_assign=on_assign, on_revoke=on_revoke)
    while not Stop.requested:
        msgs = c.consume(num_messages=500, timeout=0.2)
        offsets = {}
        for m in msgs:
            if m.error():
                if m.error().code() != KafkaError._PARTITION_EOF:
                    raise RuntimeError(str(m.error()))
                continue
            offsets[str(m.partition())] = m.offset() + 1
        if offsets:
            try:
                done = c.commit(asynchronous=False)
                emit({"event": "commit", "offsets": {str(tp.partition): tp.offset for tp in done if tp.offset >= 0}})
            except KafkaException as e:
                emit({"event": "commit_failed", "error": str(e)})
    c.close()


def kafka_python_member(bootstrap, args):
    from kafka import ConsumerRebalanceListener, OffsetAndMetadata
    from kafka.errors import CommitFailedError, KafkaError

    c = kafka_python_consumer(bootstrap, dict(args, commit="sync"))

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            emit({"event": "revoked", "partitions": sorted(tp.partition for tp in revoked)})

        def on_partitions_assigned(self, assigned):
            g = c._coordinator._generation  # kafka-python keeps the generation here; no public getter
            emit(
                {
                    "event": "assigned",
                    "generation": g.generation_id,
                    "member_id": g.member_id,
                    "partitions": sorted(tp.partition for tp in assigned),
                }
            )

    c.subscribe([args["topic"]], listener=Listener())
    while not Stop.requested:
        batches = c.poll(timeout_ms=200, max_records=500)
        offsets = {}
        for tp, batch in batches.items():
            offsets[tp] = OffsetAndMetadata(batch[-1].offset + 1, "")
        if offsets:
            try:
                c.commit(offsets)
                emit({"event": "commit", "offsets": {str(tp.partition): o.offset for tp, o in offsets.items()}})
            except (CommitFailedError, KafkaError) as e:
                emit({"event": "commit_failed", "error": repr(e)})
    c.close()


def list_offsets(bootstrap, args):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="group-offsets-admin")
    try:
        out = {}
        for group in args["groups"]:
            per_topic = out.setdefault(group, {})
            for tp, om in admin.list_consumer_group_offsets(group).items():
                per_topic.setdefault(tp.topic, {})[str(tp.partition)] = om.offset
        return out
    finally:
        admin.close()


def main():
    bootstrap, command, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if command == "consume":
        if args["client"] == "confluent-kafka":
            emit(confluent_consume(bootstrap, args))
        else:
            emit(kafka_python_consume(bootstrap, args))
    elif command == "member":
        run_member(bootstrap, args)
    elif command == "offsets":
        emit(list_offsets(bootstrap, args))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
