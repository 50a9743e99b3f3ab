"""Test-only: reads a topic with a confluent-kafka (librdkafka) Consumer, assign + seek to the beginning.

Prints one JSON line per record as it arrives: {"p": partition, "o": offset, "v": value, "t": unix time}.
Stops once no record arrived for `idle` seconds (counted from the start too) or after `max` seconds.

Usage: /usr/bin/python3 log-side-consumer.py BOOTSTRAP TOPIC PARTITIONS ISOLATION IDLE_S MAX_S
       (ISOLATION: read_committed or read_uncommitted)
"""

import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition


def main():
    bootstrap, topic, partitions, isolation = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    idle, max_s = float(sys.argv[5]), float(sys.argv[6])
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "log-side-unused",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "fetch.wait.max.ms": 200,
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    start = time.time()
    last = start
    while time.time() - start < max_s and time.time() - last < idle:
        m = consumer.poll(0.1)
        if m is None:
            continue
        if m.error():
            print(f"[consumer] error: {m.error()}", file=sys.stderr, flush=True)
            continue
        value = m.value()
        print(
            json.dumps(
                {
                    "p": m.partition(),
                    "o": m.offset(),
                    "v": None if value is None else value.decode("utf-8", "replace"),
                    "t": time.time(),
                }
            ),
            flush=True,
        )
        last = time.time()
    consumer.close()


if __name__ == "__main__":
    main()
