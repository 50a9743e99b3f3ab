/* CRC32C by carry-less multiplication folding over 512-bit registers (AVX-512F + VPCLMULQDQ).
 *
 * The message is a polynomial M(x) and the CRC only depends on M mod P. Each 128-bit lane holds 16
 * message bytes: a polynomial of degree < 128, its low qword H carrying the higher 64 coefficients and
 * its high qword L the lower 64 (reflected order). Moving a lane F bits forward onto the lane that sits
 * F bits later means replacing (H x^64 + L) x^F by something congruent mod P that fits in 128 bits:
 *   H x^(F+64) + L x^F  ==  H (x^(F+31) mod P) x^33 + L (x^(F-33) mod P) x^33   (mod P)
 * A carry-less multiply of a reflected qword by a reflected 32-bit constant stored in the low half of a
 * qword yields exactly operand * constant * x^33 in the lane's reflected 128-bit layout, so the two
 * constants per distance F are x^(F+31) mod P and x^(F-33) mod P, computed by gf2.c at init.
 *
 * ACCUMULATORS registers of four lanes each fold a block of 64*ACCUMULATORS bytes per iteration; at the
 * end they are folded onto the last register, its four lanes onto the last lane, and the remaining 16
 * bytes (congruent to everything read so far) go through the crc32 instruction, as do the tail bytes. */
#include "crc32c_internal.h"

#ifdef CRC32C_HAVE_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))

#define ACCUMULATORS 8
#define BLOCK (64 * ACCUMULATORS)

typedef struct {
  uint64_t lo; /* multiplies the lane's low qword: x^(F+31) mod P */
  uint64_t hi; /* multiplies the lane's high qword: x^(F-33) mod P */
} fold_constant;

static fold_constant fold_block;                  /* one loop iteration: BLOCK bytes */
static fold_constant fold_register[ACCUMULATORS]; /* [d]: d registers, 64*d bytes */
static fold_constant fold_lane[4];                /* [d]: d lanes, 16*d bytes */

static fold_constant fold_by_bits(uint64_t bits) {
  fold_constant k = {gf2_xpow_mod(bits + 31), gf2_xpow_mod(bits - 33)};
  return k;
}

void crc32c_avx512_init(void) {
  fold_block = fold_by_bits(8u * BLOCK);
  for (int d = 1; d < ACCUMULATORS; d++) fold_register[d] = fold_by_bits(512u * d);
  for (int d = 1; d < 4; d++) fold_lane[d] = fold_by_bits(128u * d);
}

TARGET static inline __m128i constant128(fold_constant k) {
  return _mm_set_epi64x((long long)k.hi, (long long)k.lo);
}

TARGET static inline __m512i fold512(__m512i x, __m512i k, __m512i into) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11),
                                   into, 0x96 /* a ^ b ^ c */);
}

TARGET static inline __m128i fold128(__m128i x, fold_constant k, __m128i into) {
  const __m128i kk = constant128(k);
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, kk, 0x00), _mm_clmulepi64_si128(x, kk, 0x11)),
                       into);
}

TARGET uint32_t crc32c_avx512(uint32_t crc, const uint8_t *p, size_t len) {
  if (len < 2 * BLOCK) return crc32c_sse42(crc, p, len);

  __m512i x[ACCUMULATORS];
#pragma GCC unroll 8
  for (int i = 0; i < ACCUMULATORS; i++) x[i] = _mm512_loadu_si512((const void *)(p + 64 * i));
  /* crc(s, M) == crc(0, M with s xor-ed onto its first four bytes) */
  x[0] = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
  p += BLOCK;
  len -= BLOCK;

  const __m512i k = _mm512_broadcast_i32x4(constant128(fold_block));
  while (len >= BLOCK) {
#pragma GCC unroll 8
    for (int i = 0; i < ACCUMULATORS; i++) {
      x[i] = fold512(x[i], k, _mm512_loadu_si512((const void *)(p + 64 * i)));
    }
    p += BLOCK;
    len -= BLOCK;
  }

  __m512i last = x[ACCUMULATORS - 1];
  for (int i = 0; i < ACCUMULATORS - 1; i++) {
    last = fold512(x[i], _mm512_broadcast_i32x4(constant128(fold_register[ACCUMULATORS - 1 - i])), last);
  }
  __m128i v = _mm512_extracti32x4_epi32(last, 3);
  v = fold128(_mm512_extracti32x4_epi32(last, 0), fold_lane[3], v);
  v = fold128(_mm512_extracti32x4_epi32(last, 1), fold_lane[2], v);
  v = fold128(_mm512_extracti32x4_epi32(last, 2), fold_lane[1], v);

  uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
  c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
  return crc32c_sse42((uint32_t)c, p, len);
}
#endif
