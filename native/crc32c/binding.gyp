# node-gyp build of the CRC32C addon (see README.md; run by ../build.js). Plain C against node_api.h;
# the SIMD paths carry their own target attributes, so no -m flags here: the file builds for generic
# x86-64 and elsewhere.
{
  "targets": [
    {
      "target_name": "crc32c",
      "sources": ["binding.c", "dispatch.c", "gf2.c", "sse42.c", "avx512.c"],
      "cflags": ["-O3", "-std=c11", "-Wall", "-Wextra"],
      "cflags!": ["-O2"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3", "-std=c11"] }
    }
  ]
}
