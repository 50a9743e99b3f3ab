/* Node-API addon: flock(2) on a file descriptor Node opened, for the log-dir locks (src/common/dir-lock.ts).
 * Exports:
 *   tryLockExclusive(fd: number): number
 *       flock(fd, LOCK_EX | LOCK_NB): 0 when this open file now holds the lock, else the errno
 *       (EWOULDBLOCK: another open file holds it, in this process or another; ENOSYS where there is no
 *       flock). Never blocks.
 *   unlock(fd: number): number
 *       flock(fd, LOCK_UN): 0 or the errno.
 * Why flock and not fcntl (F_SETLK): an flock lock belongs to the open file description, so two opens of
 * the same file in one process conflict (two brokers in one test process), and closing some other
 * descriptor of the file does not drop it; an fcntl lock belongs to the process, is granted again to the
 * same process, and goes away when any of its descriptors of the file is closed. Either way the kernel
 * releases the lock when the last descriptor of the open file is closed, which includes the process dying,
 * so no crash leaves a stale lock behind. Node opens files with O_CLOEXEC, so child processes (ZooKeeper,
 * brokers started by dev-cluster) do not inherit the descriptor nor keep the lock. */
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#if !defined(_WIN32)
#include <sys/file.h>
#endif

static int read_fd(napi_env env, napi_callback_info info, int *fd) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t value;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return 0;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &value) != napi_ok || value < 0) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "file-lock: fd must be a non-negative integer");
    return 0;
  }
  *fd = value;
  return 1;
}

static napi_value errno_result(napi_env env, int error) {
  napi_value result;
  napi_create_int32(env, error, &result);
  return result;
}

static int do_flock(int fd, int operation) {
#if defined(_WIN32)
  (void)fd;
  (void)operation;
  return ENOSYS;
#else
  for (;;) {
    if (flock(fd, operation) == 0) return 0;
    if (errno != EINTR) return errno;
  }
#endif
}

static napi_value try_lock_exclusive(napi_env env, napi_callback_info info) {
  int fd;
  if (!read_fd(env, info, &fd)) return NULL;
#if defined(_WIN32)
  return errno_result(env, do_flock(fd, 0));
#else
  return errno_result(env, do_flock(fd, LOCK_EX | LOCK_NB));
#endif
}

static napi_value unlock(napi_env env, napi_callback_info info) {
  int fd;
  if (!read_fd(env, info, &fd)) return NULL;
#if defined(_WIN32)
  return errno_result(env, do_flock(fd, 0));
#else
  return errno_result(env, do_flock(fd, LOCK_UN));
#endif
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "tryLockExclusive", NAPI_AUTO_LENGTH, try_lock_exclusive, NULL, &fn) != napi_ok)
    return NULL;
  if (napi_set_named_property(env, exports, "tryLockExclusive", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "unlock", NAPI_AUTO_LENGTH, unlock, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "unlock", fn) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
