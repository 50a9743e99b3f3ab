/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78) in Kafka's convention: the result of one call is
 * the init of the next, so crc32c(b, crc32c(a)) == crc32c(a || b). The implementation is chosen once at
 * init from what the CPU offers; CRC32C_UNAVAILABLE tells the caller to use its own fallback. */
#ifndef TRIBUTARY_CRC32C_H
#define TRIBUTARY_CRC32C_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  CRC32C_PATH_NONE = 0,     /* no hardware path: every call returns CRC32C_UNAVAILABLE */
  CRC32C_PATH_SSE42 = 1,    /* 3-way interleaved crc32 instruction */
  CRC32C_PATH_AVX512 = 2,   /* AVX-512 VPCLMULQDQ folding, crc32 instruction for the rest */
} crc32c_path;

/* Returned instead of a CRC when the requested path cannot run; outside the uint32 range. */
#define CRC32C_UNAVAILABLE (-1)

/* Detects the CPU and builds the fold constants and zero-shift tables. Returns the best path. */
crc32c_path crc32c_init(void);

/* True when `path` can run on this CPU (valid after crc32c_init). */
int crc32c_path_available(crc32c_path path);

/* CRC32C of data[0..len) continuing from `init` (a previous result, 0 to start), computed by `path`;
 * CRC32C_UNAVAILABLE when that path cannot run here. */
int64_t crc32c_compute(crc32c_path path, uint32_t init, const uint8_t *data, size_t len);

#endif
