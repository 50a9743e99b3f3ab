// FrameReader: splits a byte stream (socket data events) into Kafka frames, each an int32 size
// followed by that many bytes. The size is checked against the limit (`socket.request.max.bytes`
// on a broker) as soon as its 4 bytes arrive, before anything is buffered for the frame. A frame that
// lies in one chunk is returned as a zero-copy slice of it. One that spans chunks is assembled in a
// buffer from the owner's FrameAllocator (the broker's MemoryPool, which the broker releases when done
// with the frame; the client's, which asks for huge pages for large responses): once a quarter of its
// bytes have arrived, the buffer is taken and every later chunk is copied into it as it comes in, while
// still in the CPU's cache, so the last chunk does not leave megabytes to copy. Never more than 4× the
// bytes actually received is allocated for a frame, whatever its size prefix says.
// A caller that reads into one reused buffer (the client) pushes its chunks as volatile: frames and
// kept bytes are then copies, never views of that buffer.

/** Where frames that span chunks get their buffers: the broker's MemoryPool, or the client's allocator. */
export interface FrameAllocator {
  allocate(size: number): Buffer;
}

const EMPTY = Buffer.alloc(0);

export class FrameTooLargeError extends Error {
  override readonly name = "FrameTooLargeError";

  constructor(
    readonly size: number,
    readonly maxBytes: number,
  ) {
    super(
      size < 0
        ? `Invalid receive (size = ${size}): negative frame size`
        : `Invalid receive (size = ${size} larger than ${maxBytes})`,
    );
  }
}

/** A spanning frame's buffer is taken once buffered × ASSEMBLE_AFTER_FRACTION ≥ its size. */
const ASSEMBLE_AFTER_FRACTION = 4;

export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Size of the frame being read, or -1 while its size prefix is incomplete. */
  private frameSize = -1;
  /** The frame being copied into as its chunks arrive, and how many of its bytes are in. */
  private assembling: Buffer | undefined;
  private filled = 0;
  /** During push() of a chunk whose memory the caller reuses: that chunk's ArrayBuffer. */
  private volatile: ArrayBufferLike | undefined;
  /** Set once a bad size prefix was seen; no frame is returned after it. */
  failure: FrameTooLargeError | undefined;

  constructor(
    private maxBytes: number,
    private readonly allocator?: FrameAllocator,
  ) {}

  /** Changes the size limit for the frames not yet started (a connection that authenticated gets more). */
  setMaxBytes(maxBytes: number): void {
    this.maxBytes = maxBytes;
  }

  /** Bytes received but not yet returned as frames. */
  get pendingBytes(): number {
    return this.buffered + this.filled;
  }

  /** The size prefix of the frame being read (not all of it in yet), or -1 between frames. */
  get partialFrameSize(): number {
    return this.frameSize;
  }

  /**
   * Adds received bytes and returns every frame now complete (without size prefixes), in order.
   * When a size prefix is negative or above the limit, the frames before it are still returned and
   * `failure` is set: the stream is then unusable and the connection should be closed. `volatile`:
   * the chunk's memory is reused after this call (nothing returned or kept refers to it).
   */
  push(chunk: Buffer, volatile = false): Buffer[] {
    if (this.failure) return [];
    this.volatile = volatile ? chunk.buffer : undefined;
    const frames: Buffer[] = [];
    let rest = chunk;
    const frame = this.assembling;
    if (frame !== undefined) {
      const n = Math.min(this.frameSize - this.filled, rest.length);
      rest.copy(frame, this.filled, 0, n);
      this.filled += n;
      if (this.filled < this.frameSize) return frames;
      frames.push(frame);
      this.assembling = undefined;
      this.filled = 0;
      this.frameSize = -1;
      rest = n === rest.length ? EMPTY : rest.subarray(n);
    }
    if (rest.length > 0) {
      this.chunks.push(rest);
      this.buffered += rest.length;
    }
    for (;;) {
      if (this.frameSize < 0) {
        if (this.buffered < 4) break;
        const size = this.peekInt32();
        if (size < 0 || size > this.maxBytes) {
          this.failure = new FrameTooLargeError(size, this.maxBytes);
          this.chunks = [];
          this.buffered = 0;
          break;
        }
        this.consume(4);
        this.frameSize = size;
      }
      if (this.buffered < this.frameSize) {
        if (this.buffered * ASSEMBLE_AFTER_FRACTION >= this.frameSize) this.startAssembling();
        break;
      }
      frames.push(this.take(this.frameSize));
      this.frameSize = -1;
    }
    // A volatile chunk's memory is reused once push returns: keep a copy of what is left of it.
    if (this.volatile !== undefined) {
      for (let i = 0; i < this.chunks.length; i++) {
        if (this.chunks[i].buffer === this.volatile) this.chunks[i] = Buffer.from(this.chunks[i]);
      }
      this.volatile = undefined;
    }
    return frames;
  }

  /** Moves the incomplete frame's buffered bytes into its own buffer, which takes the rest as it comes. */
  private startAssembling(): void {
    const frame = this.allocate(this.frameSize);
    let filled = 0;
    for (const c of this.chunks) filled += c.copy(frame, filled);
    this.chunks = [];
    this.buffered = 0;
    this.assembling = frame;
    this.filled = filled;
  }

  private allocate(n: number): Buffer {
    return this.allocator ? this.allocator.allocate(n) : Buffer.allocUnsafe(n);
  }

  private peekInt32(): number {
    const first = this.chunks[0];
    if (first.length >= 4) return first.readInt32BE(0);
    const head = Buffer.alloc(4);
    let filled = 0;
    for (const c of this.chunks) {
      filled += c.copy(head, filled, 0, Math.min(c.length, 4 - filled));
      if (filled === 4) break;
    }
    return head.readInt32BE(0);
  }

  private consume(n: number): void {
    this.buffered -= n;
    while (n > 0) {
      const first = this.chunks[0];
      if (first.length <= n) {
        n -= first.length;
        this.chunks.shift();
      } else {
        this.chunks[0] = first.subarray(n);
        n = 0;
      }
    }
  }

  private take(n: number): Buffer {
    const first = this.chunks[0];
    if (n === 0) return Buffer.alloc(0);
    if (first.length >= n) {
      const frame = first.buffer === this.volatile ? Buffer.from(first.subarray(0, n)) : first.subarray(0, n);
      this.consume(n);
      return frame;
    }
    const frame = this.allocate(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0];
      const k = Math.min(c.length, n - filled);
      c.copy(frame, filled, 0, k);
      filled += k;
      this.consume(k);
    }
    return frame;
  }
}
