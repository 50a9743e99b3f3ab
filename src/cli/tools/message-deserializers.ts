// The deserializers console-consumer's formatter can apply to keys, values and header values (Kafka's
// DefaultMessageFormatter with --key-deserializer / --value-deserializer, or the formatter properties
// key.deserializer / value.deserializer / headers.deserializer): Kafka's org.apache.kafka.common
// .serialization classes by their class names, each printing what the Java object's toString() gives —
// a Long as a decimal, a Double as Java's Double.toString ("1.0E7"), Bytes with \xNN escapes. A value of
// the wrong size fails as Kafka's does ("Size of data received by LongDeserializer is not 8").
// ByteArray/ByteBuffer deserializers are not offered: Java prints those objects' identities, not data.

/** Turns the raw bytes into the text printed. Throws a DeserializationError on bad input. */
export type MessageDeserializer = (bytes: Buffer) => string;

export class DeserializationError extends Error {
  override readonly name = "SerializationException";
}

const PACKAGE = "org.apache.kafka.common.serialization.";

/** `name` is how the class's size check names itself (Double and Float say only "Deserializer"). */
function fixedSize(name: string, size: number, read: (b: Buffer) => string): MessageDeserializer {
  return (b) => {
    if (b.length !== size) {
      throw new DeserializationError(`Size of data received by ${name} is not ${size}`);
    }
    return read(b);
  };
}

/** Java's Double.toString / Float.toString of the shortest digits that read back as `v`. */
function javaFloatingToString(v: number, shortest: string): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "Infinity";
  if (v === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(v);
  const [mantissa, exp] = Number(shortest).toExponential().split("e");
  if (abs >= 1e-3 && abs < 1e7) {
    const plain = Number(shortest).toString();
    return plain.includes(".") ? plain : `${plain}.0`;
  }
  const m = mantissa.includes(".") ? mantissa : `${mantissa}.0`;
  return `${m}E${Number(exp)}`;
}

/** The fewest significant digits that read back as the same 32-bit float (Java's Float.toString). */
function shortestFloat32(f: number): string {
  for (let p = 1; p <= 9; p++) {
    const s = f.toPrecision(p);
    if (Math.fround(Number(s)) === f) return s;
  }
  return f.toPrecision(9);
}

/** Kafka's Bytes.toString: printable ASCII as is (but the backslash), anything else as \xNN. */
function bytesToString(b: Buffer): string {
  let out = "";
  for (const ch of b) {
    out +=
      ch >= 0x20 && ch <= 0x7e && ch !== 0x5c
        ? String.fromCharCode(ch)
        : `\\x${ch.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const DESERIALIZERS: ReadonlyMap<string, MessageDeserializer> = new Map([
  ["StringDeserializer", (b: Buffer) => b.toString("utf8")],
  ["LongDeserializer", fixedSize("LongDeserializer", 8, (b) => b.readBigInt64BE(0).toString())],
  ["IntegerDeserializer", fixedSize("IntegerDeserializer", 4, (b) => String(b.readInt32BE(0)))],
  ["ShortDeserializer", fixedSize("ShortDeserializer", 2, (b) => String(b.readInt16BE(0)))],
  [
    "DoubleDeserializer",
    fixedSize("Deserializer", 8, (b) => {
      const d = b.readDoubleBE(0);
      return javaFloatingToString(d, String(d));
    }),
  ],
  [
    "FloatDeserializer",
    fixedSize("Deserializer", 4, (b) => {
      const f = b.readFloatBE(0);
      return javaFloatingToString(f, Number.isFinite(f) ? shortestFloat32(f) : String(f));
    }),
  ],
  [
    "BooleanDeserializer",
    (b: Buffer) => {
      if (b.length !== 1)
        throw new DeserializationError("Size of data received by BooleanDeserializer is not 1");
      if (b[0] === 0) return "false";
      if (b[0] === 1) return "true";
      // Java prints the byte signed.
      throw new DeserializationError(`Unexpected byte received by BooleanDeserializer: ${b.readInt8(0)}`);
    },
  ],
  [
    "UUIDDeserializer",
    (b: Buffer) => {
      // UUID.fromString takes groups of 1–8, 1–4, 1–4, 1–4 and 1–12 hex digits; toString pads them.
      const m =
        /^([0-9a-fA-F]{1,8})-([0-9a-fA-F]{1,4})-([0-9a-fA-F]{1,4})-([0-9a-fA-F]{1,4})-([0-9a-fA-F]{1,12})$/.exec(
          b.toString("utf8"),
        );
      if (m === null) throw new DeserializationError("Error parsing data into UUID");
      const widths = [8, 4, 4, 4, 12];
      return m
        .slice(1)
        .map((g, i) => g.toLowerCase().padStart(widths[i], "0"))
        .join("-");
    },
  ],
  ["BytesDeserializer", bytesToString],
]);

/** The supported class names, for messages. */
export const SUPPORTED_DESERIALIZERS: readonly string[] = [...DESERIALIZERS.keys()].map((n) => PACKAGE + n);

/** The deserializer of a Kafka class name, or undefined when it is not one of SUPPORTED_DESERIALIZERS. */
export function deserializerFor(className: string): MessageDeserializer | undefined {
  const name = className.trim();
  return name.startsWith(PACKAGE) ? DESERIALIZERS.get(name.slice(PACKAGE.length)) : undefined;
}
