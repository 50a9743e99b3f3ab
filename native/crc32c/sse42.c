/* CRC32C with the SSE4.2 crc32 instruction. One crc32q has a latency of about three cycles but the CPU
 * can start one per cycle, so the buffer is cut into three streams computed side by side; the three
 * partial CRCs are then joined with the zero-shift operator:
 *   crc(s, A||B) = shift_|B|(crc(s, A)) ^ crc(0, B). */
#include "crc32c_internal.h"

#ifdef CRC32C_HAVE_X86
#include <nmmintrin.h>
#include <string.h>

#define TARGET __attribute__((target("sse4.2")))

/* Bytes per stream: long blocks for the bulk, short ones so mid-sized buffers still interleave. */
#define LONG_BLOCK 8192
#define SHORT_BLOCK 256

static crc32c_zero_shift shift_long;
static crc32c_zero_shift shift_short;

void crc32c_sse42_init(void) {
  crc32c_zero_shift_init(&shift_long, LONG_BLOCK);
  crc32c_zero_shift_init(&shift_short, SHORT_BLOCK);
}

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

TARGET static uint32_t serial(uint32_t crc, const uint8_t *p, size_t len) {
  uint64_t c = crc;
  while (len >= 8) {
    c = _mm_crc32_u64(c, load64(p));
    p += 8;
    len -= 8;
  }
  crc = (uint32_t)c;
  while (len-- > 0) crc = _mm_crc32_u8(crc, *p++);
  return crc;
}

/* Three streams of `block` bytes each (block a multiple of 8) starting at p, joined into one CRC. */
TARGET static inline uint32_t three_way(uint32_t crc, const uint8_t *p, size_t block,
                                        const crc32c_zero_shift *shift) {
  uint64_t c0 = crc, c1 = 0, c2 = 0;
  const uint8_t *a = p, *b = p + block, *c = p + 2 * block;
  for (size_t i = 0; i < block; i += 8) {
    c0 = _mm_crc32_u64(c0, load64(a + i));
    c1 = _mm_crc32_u64(c1, load64(b + i));
    c2 = _mm_crc32_u64(c2, load64(c + i));
  }
  uint32_t joined = crc32c_zero_shift_apply(shift, (uint32_t)c0) ^ (uint32_t)c1;
  return crc32c_zero_shift_apply(shift, joined) ^ (uint32_t)c2;
}

TARGET uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len) {
  while (len >= 3 * LONG_BLOCK) {
    crc = three_way(crc, p, LONG_BLOCK, &shift_long);
    p += 3 * LONG_BLOCK;
    len -= 3 * LONG_BLOCK;
  }
  while (len >= 3 * SHORT_BLOCK) {
    crc = three_way(crc, p, SHORT_BLOCK, &shift_short);
    p += 3 * SHORT_BLOCK;
    len -= 3 * SHORT_BLOCK;
  }
  return serial(crc, p, len);
}
#endif
