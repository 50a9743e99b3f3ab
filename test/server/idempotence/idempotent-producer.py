"""confluent-kafka (librdkafka) idempotent producer for test/server/idempotence/clients.test.ts. Test-only.

Produces `count` messages (key "<prefix>-<i>", value "<i>") with enable.idempotence=true to `topic`,
in small batches so that many Produce requests are in flight, waits for every delivery report and prints
{"delivered": n, "errors": [...]} as JSON on stdout. Every wait is bounded.

Usage: /usr/bin/python3 idempotent-producer.py <bootstrap> <topic> <count> <prefix>
"""

import json
import sys

from confluent_kafka import Producer


def main():
    bootstrap, topic, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 2,
            "batch.num.messages": 20,
            "max.in.flight.requests.per.connection": 5,
            "message.timeout.ms": 120000,
            "retry.backoff.ms": 20,
            "reconnect.backoff.ms": 10,
            "reconnect.backoff.max.ms": 200,
        }
    )
    delivered = 0
    errors = []

    def on_delivery(err, _msg):
        nonlocal delivered
        if err is not None:
            errors.append(str(err))
        else:
            delivered += 1

    for i in range(count):
        while True:
            try:
                producer.produce(topic, key=f"{prefix}-{i}", value=str(i), on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    left = producer.flush(150)
    print(json.dumps({"delivered": delivered, "errors": errors[:20], "undelivered": left}))


if __name__ == "__main__":
    main()
