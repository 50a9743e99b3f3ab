/* Runtime choice of the CRC32C path: detects the CPU once, prepares the tables of the paths it can run,
 * and applies Kafka's convention (register starts at ~init, result is ~register) around the raw paths.
 * On other architectures or compilers only CRC32C_PATH_NONE exists and callers use their fallback. */
#include "crc32c.h"

#include "crc32c_internal.h"

static int available[3];

#ifdef CRC32C_HAVE_X86
/* The addon is initialised once per module instance (main thread and each worker): the tables are built
 * by the first one only, the others wait until they are complete. 0 = not built, 1 = building, 2 = built. */
static int tables_state;

static void build_tables_once(void) {
  int expected = 0;
  if (__atomic_compare_exchange_n(&tables_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
      crc32c_sse42_init();
      available[CRC32C_PATH_SSE42] = 1;
      /* __builtin_cpu_supports also checks that the OS saves the ZMM state (XGETBV). */
      if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
          __builtin_cpu_supports("pclmul")) {
        crc32c_avx512_init();
        available[CRC32C_PATH_AVX512] = 1;
      }
    }
    __atomic_store_n(&tables_state, 2, __ATOMIC_RELEASE);
  }
  while (__atomic_load_n(&tables_state, __ATOMIC_ACQUIRE) != 2) {
  }
}
#endif

crc32c_path crc32c_init(void) {
  crc32c_path best = CRC32C_PATH_NONE;
#ifdef CRC32C_HAVE_X86
  build_tables_once();
  if (available[CRC32C_PATH_SSE42]) best = CRC32C_PATH_SSE42;
  if (available[CRC32C_PATH_AVX512]) best = CRC32C_PATH_AVX512;
#endif
  return best;
}

int crc32c_path_available(crc32c_path path) {
  return path > CRC32C_PATH_NONE && path <= CRC32C_PATH_AVX512 && available[path];
}

int64_t crc32c_compute(crc32c_path path, uint32_t init, const uint8_t *data, size_t len) {
  if (!crc32c_path_available(path)) return CRC32C_UNAVAILABLE;
#ifdef CRC32C_HAVE_X86
  const uint32_t state = ~init;
  if (len == 0) return init;
  if (path == CRC32C_PATH_AVX512) return (uint32_t)~crc32c_avx512(state, data, len);
  return (uint32_t)~crc32c_sse42(state, data, len);
#else
  (void)data;
  (void)len;
  (void)init;
  return CRC32C_UNAVAILABLE;
#endif
}
