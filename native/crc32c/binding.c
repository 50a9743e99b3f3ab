/* Node-API glue for the CRC32C addon. Exports:
 *   crc32c(data: Uint8Array, init?: number): number   best path; -1 (CRC32C_UNAVAILABLE) when none
 *   implementation: string                             name of the best path, "none" without one
 *   paths: { [name]: crc32c-like function }            every path this CPU can run, to force one;
 *                                                      paths[implementation] is crc32c itself
 * A function's path travels as its callback data. */
#define NAPI_VERSION 8
#include <node_api.h>

#include "crc32c.h"

static const char *const PATH_NAMES[] = {"none", "sse4.2", "avx512-vpclmulqdq"};

static napi_value throw_type_error(napi_env env, const char *message) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
  return NULL;
}

static napi_value compute(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void *data;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, &data) != napi_ok) return NULL;
  const crc32c_path path = (crc32c_path)(uintptr_t)data;

  bool is_typedarray = false;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &is_typedarray) != napi_ok || !is_typedarray) {
    return throw_type_error(env, "crc32c: data must be a Buffer or Uint8Array");
  }
  napi_typedarray_type type;
  size_t length;
  void *bytes; /* already advanced by the view's byteOffset */
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &bytes, NULL, NULL) != napi_ok) return NULL;
  if (type != napi_uint8_array && type != napi_uint8_clamped_array && type != napi_int8_array) {
    return throw_type_error(env, "crc32c: data must be a Buffer or Uint8Array");
  }

  uint32_t init = 0;
  if (argc >= 2) {
    napi_valuetype init_type;
    napi_typeof(env, argv[1], &init_type);
    if (init_type == napi_number) {
      napi_get_value_uint32(env, argv[1], &init);
    } else if (init_type != napi_undefined) {
      return throw_type_error(env, "crc32c: init must be a number");
    }
  }

  const int64_t crc = crc32c_compute(path, init, (const uint8_t *)bytes, length);
  napi_value result;
  if (crc < 0) {
    napi_create_int32(env, CRC32C_UNAVAILABLE, &result);
  } else {
    napi_create_uint32(env, (uint32_t)crc, &result);
  }
  return result;
}

static napi_value make_function(napi_env env, crc32c_path path) {
  napi_value fn;
  napi_create_function(env, "crc32c", NAPI_AUTO_LENGTH, compute, (void *)(uintptr_t)path, &fn);
  return fn;
}

NAPI_MODULE_INIT() {
  const crc32c_path best = crc32c_init();

  napi_value name;
  napi_create_string_utf8(env, PATH_NAMES[best], NAPI_AUTO_LENGTH, &name);
  napi_set_named_property(env, exports, "implementation", name);
  const napi_value best_fn = make_function(env, best);
  napi_set_named_property(env, exports, "crc32c", best_fn);

  napi_value paths;
  napi_create_object(env, &paths);
  for (int p = CRC32C_PATH_SSE42; p <= CRC32C_PATH_AVX512; p++) {
    if (crc32c_path_available((crc32c_path)p)) {
      const napi_value fn = p == (int)best ? best_fn : make_function(env, (crc32c_path)p);
      napi_set_named_property(env, paths, PATH_NAMES[p], fn);
    }
  }
  napi_set_named_property(env, exports, "paths", paths);
  return exports;
}
