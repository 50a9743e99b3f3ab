/* Shared between the CRC32C paths: the polynomial arithmetic (gf2.c), the "shift by L zero bytes"
 * operator, and the per-path entry points. All CRC states here are raw (no pre/post inversion): the
 * 32-bit register as the crc32 instruction keeps it, bit i holding the coefficient of x^(31-i). */
#ifndef TRIBUTARY_CRC32C_INTERNAL_H
#define TRIBUTARY_CRC32C_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* P(x) = x^32 + x^28 + x^27 + ... + 1 (Castagnoli) without its x^32 term, bit-reflected. */
#define CRC32C_POLY_REFLECTED 0x82F63B78u

/* a(x) * b(x) mod P(x), both operands and the result bit-reflected (bit i = coefficient of x^(31-i)). */
uint32_t gf2_mulmod(uint32_t a, uint32_t b);

/* x^n mod P(x), bit-reflected. */
uint32_t gf2_xpow_mod(uint64_t n);

/* The linear map "run `bytes` zero bytes through the CRC register": state(x) -> state(x) * x^(8*bytes)
 * mod P, tabulated one input byte at a time so applying it costs four lookups. */
typedef struct {
  uint32_t table[4][256];
} crc32c_zero_shift;

void crc32c_zero_shift_init(crc32c_zero_shift *op, uint64_t bytes);

static inline uint32_t crc32c_zero_shift_apply(const crc32c_zero_shift *op, uint32_t crc) {
  return op->table[0][crc & 0xff] ^ op->table[1][(crc >> 8) & 0xff] ^ op->table[2][(crc >> 16) & 0xff] ^
         op->table[3][crc >> 24];
}

/* CRC32C_NO_SIMD builds only the portable part (what other architectures get), for checking it. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(CRC32C_NO_SIMD)
#define CRC32C_HAVE_X86 1

/* Built by crc32c_sse42_init / crc32c_avx512_init before the first call of their path. */
void crc32c_sse42_init(void);
uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len);

void crc32c_avx512_init(void);
uint32_t crc32c_avx512(uint32_t crc, const uint8_t *p, size_t len);
#endif

#endif
