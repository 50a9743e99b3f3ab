// A small seeded PRNG (mulberry32) for property tests, so a failing case can be replayed by seed.

export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.int(0, 255);
    return b;
  }

  bigint64(): bigint {
    return this.bytes(8).readBigInt64BE(0);
  }

  /** A short string mixing ASCII and multi-byte code points. */
  string(maxLen = 12): string {
    const n = this.int(0, maxLen);
    let s = "";
    for (let i = 0; i < n; i++) {
      const k = this.int(0, 9);
      s +=
        k < 7
          ? String.fromCharCode(this.int(32, 126))
          : k < 9
            ? String.fromCharCode(this.int(0xa0, 0x7ff))
            : "😀";
    }
    return s;
  }
}
