// console-consumer's deserializers print what Kafka's Java deserializers' objects print (toString):
// Java's Double/Float.toString rules, fixed sizes with Kafka's SerializationException messages, Bytes
// escapes; unknown class names are refused.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DeserializationError,
  deserializerFor,
  SUPPORTED_DESERIALIZERS,
} from "../../../src/cli/tools/message-deserializers.js";

const P = "org.apache.kafka.common.serialization.";

function run(name: string, bytes: Buffer): string {
  const d = deserializerFor(P + name);
  assert.ok(d, name);
  return d(bytes);
}

function double(v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
}

function float(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeFloatBE(v);
  return b;
}

test("numbers as Java prints them", () => {
  const long = Buffer.alloc(8);
  long.writeBigInt64BE(-9007199254740993n);
  assert.equal(run("LongDeserializer", long), "-9007199254740993");
  assert.equal(run("IntegerDeserializer", Buffer.from([0xff, 0xff, 0xff, 0xfe])), "-2");
  assert.equal(run("ShortDeserializer", Buffer.from([0x01, 0x00])), "256");
  // Double.toString: plain between 10^-3 and 10^7 (always a fractional part), computerized notation outside.
  const doubles: Array<[number, string]> = [
    [1, "1.0"],
    [0.1, "0.1"],
    [-2.5, "-2.5"],
    [0.001, "0.001"],
    [1e-4, "1.0E-4"],
    [9999999.5, "9999999.5"],
    [1e7, "1.0E7"],
    [123456789, "1.23456789E8"],
    [1.5e300, "1.5E300"],
    [0, "0.0"],
    [-0, "-0.0"],
    [Number.NaN, "NaN"],
    [Number.NEGATIVE_INFINITY, "-Infinity"],
  ];
  for (const [v, s] of doubles) assert.equal(run("DoubleDeserializer", double(v)), s, String(v));
  // Float.toString: the fewest digits that read back as the same float.
  const floats: Array<[number, string]> = [
    [0.1, "0.1"],
    [1, "1.0"],
    [3.4028234663852886e38, "3.4028235E38"],
    [1e10, "1.0E10"],
    [Number.POSITIVE_INFINITY, "Infinity"],
  ];
  for (const [v, s] of floats) assert.equal(run("FloatDeserializer", float(v)), s, String(v));
});

test("strings, booleans, UUIDs and Bytes", () => {
  assert.equal(run("StringDeserializer", Buffer.from("héllo")), "héllo");
  assert.equal(run("BooleanDeserializer", Buffer.from([1])), "true");
  assert.equal(run("BooleanDeserializer", Buffer.from([0])), "false");
  assert.equal(
    run("UUIDDeserializer", Buffer.from("0E984725-C51C-4BF4-9960-E1C80E27ABA0")),
    "0e984725-c51c-4bf4-9960-e1c80e27aba0",
  );
  // As Java's UUID.fromString, short groups are taken and printed padded.
  assert.equal(run("UUIDDeserializer", Buffer.from("1-2-3-4-5")), "00000001-0002-0003-0004-000000000005");
  assert.equal(run("BytesDeserializer", Buffer.from([0x41, 0x00, 0x5c, 0x7e, 0xff])), "A\\x00\\x5C~\\xFF");
});

test("wrong sizes fail with Kafka's messages; unknown classes are not offered", () => {
  const fails = (name: string, bytes: Buffer, message: string) =>
    assert.throws(
      () => run(name, bytes),
      (e: Error) => e instanceof DeserializationError && e.message === message,
    );
  fails("LongDeserializer", Buffer.from("null"), "Size of data received by LongDeserializer is not 8");
  fails("IntegerDeserializer", Buffer.alloc(8), "Size of data received by IntegerDeserializer is not 4");
  fails("ShortDeserializer", Buffer.alloc(1), "Size of data received by ShortDeserializer is not 2");
  // Kafka's DoubleDeserializer and FloatDeserializer name themselves "Deserializer" in this message.
  fails("DoubleDeserializer", Buffer.alloc(4), "Size of data received by Deserializer is not 8");
  fails("FloatDeserializer", Buffer.alloc(8), "Size of data received by Deserializer is not 4");
  fails("BooleanDeserializer", Buffer.from([0xff]), "Unexpected byte received by BooleanDeserializer: -1");
  fails("UUIDDeserializer", Buffer.from("nope"), "Error parsing data into UUID");
  assert.equal(deserializerFor(`${P}ByteArrayDeserializer`), undefined);
  assert.equal(deserializerFor("LongDeserializer"), undefined, "class names are fully qualified");
  assert.ok(SUPPORTED_DESERIALIZERS.includes(`${P}LongDeserializer`));
});
