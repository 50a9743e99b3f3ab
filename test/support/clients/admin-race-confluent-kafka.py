"""confluent-kafka (librdkafka) driver: admin operations sent right after CreateTopics. Test-only.

For each of `count` new topics, CreateTopics with operation_timeout=0 (the broker answers once the topic's
znodes are written, before the controller has made its partitions) and then, at once, the operation under
test on that topic. Prints one JSON object {topic: null or "ERROR_NAME: message"} on stdout;
test/cluster/admin-after-create.test.ts asserts every value is null. A client failure outside the
operations is a traceback on stderr and a non-zero exit. Every wait is bounded.

Usage: /usr/bin/python3 admin-race-confluent-kafka.py <bootstrap> <operation> <prefix> <count>
Operations: create_partitions, delete_topics, describe_configs, alter_configs.
"""

import json
import sys

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

TIMEOUT = 15.0


def outcome(future):
    try:
        future.result(timeout=TIMEOUT)
        return None
    except KafkaException as e:
        err = e.args[0]
        return f"{err.name()}: {err.str()}" if isinstance(err, KafkaError) else str(err)


def act(admin, operation, topic):
    if operation == "create_partitions":
        return outcome(admin.create_partitions([NewPartitions(topic, 4)])[topic])
    if operation == "delete_topics":
        return outcome(admin.delete_topics([topic])[topic])
    if operation == "describe_configs":
        futures = admin.describe_configs([ConfigResource("topic", topic)])
        return outcome(next(iter(futures.values())))
    if operation == "alter_configs":
        futures = admin.alter_configs([ConfigResource("topic", topic, set_config={"retention.ms": "7200000"})])
        return outcome(next(iter(futures.values())))
    raise SystemExit(f"unknown operation {operation}")


def main():
    bootstrap, operation, prefix, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    results = {}
    for i in range(count):
        topic = f"{prefix}{i}"
        created = outcome(admin.create_topics([NewTopic(topic, 3, 1)], operation_timeout=0)[topic])
        results[topic] = f"CreateTopics: {created}" if created is not None else act(admin, operation, topic)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
