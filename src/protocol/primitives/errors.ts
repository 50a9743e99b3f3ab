// Errors raised while decoding or encoding Kafka wire data.
// Every failure to parse bytes from a peer is a ProtocolDecodeError: callers catch that one type and
// turn it into a Kafka error code or a closed connection; nothing else escapes a decode.

export class ProtocolDecodeError extends Error {
  override readonly name = "ProtocolDecodeError";
}

export class ProtocolEncodeError extends Error {
  override readonly name = "ProtocolEncodeError";
}
