// CRC32C (Castagnoli), the checksum of magic-2 record batches: the one place the project gets it from.
// The project's own Node-API addon (native/crc32c: AVX-512 VPCLMULQDQ folding, or 3-way interleaved SSE4.2
// crc32, picked from the CPU when it loads) is used when its build output is present and the CPU has one
// of those paths; otherwise @node-rs/crc32. Kafka's convention (java.util.zip.CRC32C): the result of one
// call is the `init` of the next, so crc32c(b, crc32c(a)) === crc32c(a ‖ b); the result is a uint32.

import { crc32c as nodeRsCrc32c } from "@node-rs/crc32";
import { loadNativeAddon } from "../../common/native-addon.js";

export type Crc32c = (data: Uint8Array, init?: number) => number;

/** The addon's paths by the name the addon gives them, and the fallback package. */
export type Crc32cImplementation = "avx512-vpclmulqdq" | "sse4.2" | "@node-rs/crc32";

const FALLBACK: Crc32cImplementation = "@node-rs/crc32";

interface Crc32cAddon {
  /** Best path on this CPU, "none" without one (its crc32c then returns -1). */
  implementation: string;
  crc32c: Crc32c;
  paths: Partial<Record<Crc32cImplementation, Crc32c>>;
}

// Not built (no compiler at install time, another platform), or no fast path on this CPU: the fallback.
const loaded = loadNativeAddon<Crc32cAddon>("crc32c", "crc32c");
const addon = loaded?.implementation === "none" ? undefined : loaded;

const implementations = new Map<Crc32cImplementation, Crc32c>();
for (const [name, fn] of Object.entries(addon?.paths ?? {})) {
  implementations.set(name as Crc32cImplementation, fn);
}
implementations.set(FALLBACK, nodeRsCrc32c); // already returns a uint32

/** Which implementation `crc32c` runs (printed by the benchmarks). */
export const CRC32C_IMPLEMENTATION: Crc32cImplementation = addon
  ? (addon.implementation as Crc32cImplementation)
  : FALLBACK;

/** CRC32C of `data`, continuing from `init` (a previous result; 0 to start). */
export const crc32c: Crc32c = addon ? addon.crc32c : implementations.get(FALLBACK)!;

/** The implementations that can run here, best first, the fallback last (for tests and benchmarks). */
export function availableCrc32cImplementations(): Crc32cImplementation[] {
  return [...implementations.keys()].sort((a, b) => rank(a) - rank(b));
}

/** One implementation forced; throws when it cannot run on this machine. */
export function crc32cWith(implementation: Crc32cImplementation): Crc32c {
  const fn = implementations.get(implementation);
  if (!fn) throw new Error(`crc32c: the ${implementation} implementation is not available here`);
  return fn;
}

function rank(implementation: Crc32cImplementation): number {
  return ["avx512-vpclmulqdq", "sse4.2", FALLBACK].indexOf(implementation);
}
