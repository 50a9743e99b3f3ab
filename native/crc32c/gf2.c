/* Polynomial arithmetic over GF(2) modulo the CRC32C polynomial, in the bit-reflected representation
 * the CRC register uses. Everything the SIMD paths need as a constant (fold multipliers, zero-shift
 * operators) is computed from here at init instead of being written down as magic numbers. */
#include "crc32c_internal.h"

/* Multiplying by x moves every coefficient one degree up, i.e. one bit down in reflected order; the
 * coefficient that leaves x^31 becomes x^32, which is replaced by P(x) - x^32. */
static uint32_t times_x(uint32_t a) {
  return (a & 1u) ? (a >> 1) ^ CRC32C_POLY_REFLECTED : a >> 1;
}

uint32_t gf2_mulmod(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  /* Walk a's coefficients from x^0 (bit 31) upwards while b runs through b*x^0, b*x^1, ... */
  for (int degree = 0; degree < 32; degree++) {
    if (a & (0x80000000u >> degree)) product ^= b;
    b = times_x(b);
  }
  return product;
}

uint32_t gf2_xpow_mod(uint64_t n) {
  uint32_t result = 0x80000000u; /* x^0 */
  uint32_t square = 0x40000000u; /* x^1, then x^2, x^4, ... */
  while (n != 0) {
    if (n & 1u) result = gf2_mulmod(result, square);
    square = gf2_mulmod(square, square);
    n >>= 1;
  }
  return result;
}

void crc32c_zero_shift_init(crc32c_zero_shift *op, uint64_t bytes) {
  const uint32_t multiplier = gf2_xpow_mod(8u * bytes);
  for (int k = 0; k < 4; k++) {
    for (uint32_t b = 0; b < 256; b++) op->table[k][b] = gf2_mulmod(b << (8 * k), multiplier);
  }
}
