/* Node-API addon: glibc malloc settings for a process that allocates and frees many large buffers, and
 * transparent-huge-page advice for single large buffers.
 * Exports:
 *   tune(mmapThreshold: number, trimThreshold: number): boolean
 *       mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD); false where the C library has no
 *       mallopt (not glibc) or refuses a value.
 *   stats(): { mmappedChunks: number, mmappedBytes: number, heapBytes: number, freeBytes: number } | null
 *       mallinfo2's hblks, hblkhd, arena and fordblks (null without mallinfo2).
 *   trim(): boolean
 *       malloc_trim(0): gives the free memory of every arena back to the kernel (true when some was);
 *       false where the C library has none. For after a burst (e.g. hostile clients' half-sent requests)
 *       whose memory the raised M_TRIM_THRESHOLD would otherwise keep mapped.
 *   adviseHugePages(buffer: Buffer): boolean
 *       madvise(MADV_HUGEPAGE) on the whole 2 MiB pages inside the buffer; false when there are none,
 *       the argument is not a Buffer, or the system has no MADV_HUGEPAGE.
 * Why: glibc serves every allocation above M_MMAP_THRESHOLD (128 KiB, raised dynamically up to 32 MiB)
 * with its own mmap and gives it back with munmap, and trims the heap top above M_TRIM_THRESHOLD; each
 * new buffer then costs a page fault per 4 KiB, which on a VM is ~14 µs (docs/benchmarks.md). Node's
 * Buffers and ArrayBuffers come from malloc, so a broker moving megabyte batches pays it on every
 * request. With the thresholds raised, freed buffers stay mapped and are reused. */
#define NAPI_VERSION 8
#include <node_api.h>

#include <stdbool.h>
#include <stdint.h>
#if defined(__GLIBC__) || (defined(__linux__) && !defined(__ANDROID__))
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__GLIBC__)
#define HAVE_MALLOPT 1
#else
#define HAVE_MALLOPT 0
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define HAVE_MALLINFO2 1
#else
#define HAVE_MALLINFO2 0
#endif

static int read_int_arg(napi_env env, napi_value value, int *out) {
  double d;
  if (napi_get_value_double(env, value, &d) != napi_ok || !(d >= 0) || d > 2147483647.0) return 0;
  *out = (int)d;
  return 1;
}

static napi_value tune(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_value result;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  int mmap_threshold, trim_threshold;
  if (argc < 2 || !read_int_arg(env, argv[0], &mmap_threshold) || !read_int_arg(env, argv[1], &trim_threshold)) {
    napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "tune: thresholds must be byte counts below 2^31");
    return NULL;
  }
  int ok = 0;
#if HAVE_MALLOPT
  ok = mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
#endif
  napi_get_boolean(env, ok, &result);
  return result;
}

static napi_value set_number(napi_env env, napi_value object, const char *name, double value) {
  napi_value v;
  if (napi_create_double(env, value, &v) != napi_ok) return NULL;
  if (napi_set_named_property(env, object, name, v) != napi_ok) return NULL;
  return object;
}

static napi_value stats(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
#if HAVE_MALLINFO2
  struct mallinfo2 mi = mallinfo2();
  if (napi_create_object(env, &result) != napi_ok) return NULL;
  if (!set_number(env, result, "mmappedChunks", (double)mi.hblks)) return NULL;
  if (!set_number(env, result, "mmappedBytes", (double)mi.hblkhd)) return NULL;
  if (!set_number(env, result, "heapBytes", (double)mi.arena)) return NULL;
  if (!set_number(env, result, "freeBytes", (double)mi.fordblks)) return NULL;
#else
  napi_get_null(env, &result);
#endif
  return result;
}

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  int released = 0;
#if HAVE_MALLOPT
  released = malloc_trim(0);
#endif
  napi_get_boolean(env, released, &result);
  return result;
}

/* With THP "madvise" (or "always"), the advised range's pages not yet touched are then faulted in as 2 MiB
 * pages: one fault instead of 512, and fewer TLB misses while the buffer is filled and read. Only whole
 * huge pages inside the buffer are advised, never memory beyond it. */
static napi_value advise_huge_pages(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_value result;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  void *data = NULL;
  size_t length = 0;
  bool is_buffer = false;
  int ok = 0;
  if (argc >= 1 && napi_is_buffer(env, argv[0], &is_buffer) == napi_ok && is_buffer &&
      napi_get_buffer_info(env, argv[0], &data, &length) == napi_ok) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t start = ((uintptr_t)data + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)data + length) & ~(huge - 1);
    if (end > start) ok = madvise((void *)start, end - start, MADV_HUGEPAGE) == 0;
#endif
  }
  napi_get_boolean(env, ok, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "tune", NAPI_AUTO_LENGTH, tune, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "tune", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "stats", NAPI_AUTO_LENGTH, stats, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "stats", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "adviseHugePages", NAPI_AUTO_LENGTH, advise_huge_pages, NULL, &fn) != napi_ok)
    return NULL;
  if (napi_set_named_property(env, exports, "adviseHugePages", fn) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
