// Allocator tuning: the glibc malloc settings `tributary` (the broker and every tool) applies when it
// starts, through the project's native/allocator addon. Node's Buffers come from malloc, and glibc maps
// each allocation above M_MMAP_THRESHOLD afresh and unmaps it on free, so every megabyte batch received,
// read or sent would land in new pages (a page fault per 4 KiB: ~14 µs each on the development VM).
// Raised thresholds keep freed buffers mapped for the next request. Measured in docs/benchmarks.md
// ("The C library's allocator"). Without the addon (no compiler at install time, not glibc) nothing is
// tuned. The library (src/client) never calls this: a process that embeds the client keeps its settings.
// adviseHugePages is per buffer: the client asks for huge pages for large Fetch responses only.

import { loadNativeAddon } from "./native-addon.js";

/** Allocations up to this size come from the heap, not from a mapping of their own (glibc's maximum). */
export const MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024;
/** Freed memory at the top of the heap is kept up to this much before it goes back to the kernel. */
export const TRIM_THRESHOLD_BYTES = 256 * 1024 * 1024;

export interface AllocatorStats {
  /** Allocations served by a mapping of their own (mallinfo2 hblks) and their bytes (hblkhd). */
  readonly mmappedChunks: number;
  readonly mmappedBytes: number;
  /** Bytes of the main heap (mallinfo2 arena). */
  readonly heapBytes: number;
  /** Free bytes held in the arenas (mallinfo2 fordblks; absent from an addon built before it). */
  readonly freeBytes?: number;
}

interface AllocatorAddon {
  tune(mmapThreshold: number, trimThreshold: number): boolean;
  stats(): AllocatorStats | null;
  trim?(): boolean;
  adviseHugePages(buffer: Buffer): boolean;
}

const addon = loadNativeAddon<AllocatorAddon>("allocator", "allocator");
let tuned = false;

/** Whether the addon is there (built at install time). */
export const ALLOCATOR_ADDON_LOADED = addon !== undefined;

/** Applies the thresholds (once per process); true when they are in force. */
export function tuneAllocator(): boolean {
  if (!tuned && addon !== undefined) tuned = addon.tune(MMAP_THRESHOLD_BYTES, TRIM_THRESHOLD_BYTES);
  return tuned;
}

/** malloc's counters (mallinfo2), or undefined without the addon or glibc 2.33+. */
export function allocatorStats(): AllocatorStats | undefined {
  return addon?.stats() ?? undefined;
}

/**
 * Gives the arenas' free memory back to the kernel (malloc_trim) when more than `minFreeBytes` of it is
 * held; true when something was given back. The raised M_TRIM_THRESHOLD keeps freed buffers mapped for
 * reuse, which after a burst (hostile clients' half-sent requests) leaves RSS high for good: the broker
 * calls this once such memory has been freed.
 */
export function trimAllocator(minFreeBytes = 32 * 1024 * 1024): boolean {
  if (typeof addon?.trim !== "function") return false;
  const free = addon.stats()?.freeBytes;
  if (free !== undefined && free < minFreeBytes) return false;
  return addon.trim();
}

/** A transparent huge page on x86-64 and arm64 (4 KiB base pages). */
export const HUGE_PAGE_BYTES = 2 * 1024 * 1024;

/**
 * Asks the kernel to back the whole huge pages inside `buffer` with transparent huge pages
 * (madvise MADV_HUGEPAGE; works where /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or
 * "always"). Call it on a fresh buffer before writing to it: pages already touched stay as they are.
 * Unlike tuneAllocator it changes nothing process-wide, only that memory. False when nothing was
 * advised (no whole huge page inside, no addon, not Linux).
 */
export function adviseHugePages(buffer: Buffer): boolean {
  // An addon built before this function existed has no such export.
  return typeof addon?.adviseHugePages === "function" ? addon.adviseHugePages(buffer) : false;
}
