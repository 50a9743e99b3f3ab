// XXH32, the 32-bit xxHash used by the LZ4 frame format for its header, block and content checksums.
// Written from the xxHash specification (doc/xxhash_spec.md): four 32-bit lanes over 16-byte stripes,
// then the tail in 4-byte and 1-byte steps, then the avalanche.

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function round(acc: number, lane: number): number {
  return Math.imul(rotl((acc + Math.imul(lane, P2)) | 0, 13), P1);
}

/** XXH32 of buf[start, end) with `seed`, as an unsigned 32-bit number. */
export function xxhash32(buf: Uint8Array, seed = 0, start = 0, end = buf.length): number {
  const len = end - start;
  let p = start;
  let acc: number;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    const limit = end - 16;
    while (p <= limit) {
      v1 = round(v1, buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24));
      v2 = round(v2, buf[p + 4] | (buf[p + 5] << 8) | (buf[p + 6] << 16) | (buf[p + 7] << 24));
      v3 = round(v3, buf[p + 8] | (buf[p + 9] << 8) | (buf[p + 10] << 16) | (buf[p + 11] << 24));
      v4 = round(v4, buf[p + 12] | (buf[p + 13] << 8) | (buf[p + 14] << 16) | (buf[p + 15] << 24));
      p += 16;
    }
    acc = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    acc = (seed + P5) | 0;
  }
  acc = (acc + len) | 0;
  while (p + 4 <= end) {
    const lane = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24);
    acc = Math.imul(rotl((acc + Math.imul(lane, P3)) | 0, 17), P4);
    p += 4;
  }
  while (p < end) {
    acc = Math.imul(rotl((acc + Math.imul(buf[p], P5)) | 0, 11), P1);
    p++;
  }
  acc ^= acc >>> 15;
  acc = Math.imul(acc, P2);
  acc ^= acc >>> 13;
  acc = Math.imul(acc, P3);
  acc ^= acc >>> 16;
  return acc >>> 0;
}
