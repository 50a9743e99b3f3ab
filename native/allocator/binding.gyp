# node-gyp build of the allocator addon (see README.md; run by ../build.js). Plain C against node_api.h;
# without glibc it builds functions that report "not available".
{
  "targets": [
    {
      "target_name": "allocator",
      "sources": ["binding.c"],
      "cflags": ["-O2", "-std=gnu11", "-Wall", "-Wextra"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2", "-std=gnu11"] }
    }
  ]
}
