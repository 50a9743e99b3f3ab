# node-gyp build of the file-lock addon (see README.md; run by ../build.js). Plain C against node_api.h;
# flock(2) only, so it builds wherever there is a C compiler and a POSIX C library.
{
  "targets": [
    {
      "target_name": "file_lock",
      "sources": ["binding.c"],
      "cflags": ["-O2", "-std=gnu11", "-Wall", "-Wextra"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2", "-std=gnu11"] }
    }
  ]
}
