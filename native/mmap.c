/*
 * agw_mmap: a file's pages mapped into the daemon's memory (native/README.md says why).
 *
 *   map(fd, length, writable) -> Buffer   the first `length` bytes of the open file `fd`,
 *                                         MAP_SHARED: what the process writes is the file's
 *                                         page cache, what another process writes is seen
 *   unmap(buffer)                          detaches it (length 0); the pages are unmapped
 *                                         when its memory is released
 *   allocate(fd, length)                   posix_fallocate: the file's blocks exist up to
 *                                         `length`, so a write through a mapping never
 *                                         faults for want of disk space (SIGBUS)
 *   release(buffer, offset, length)        madvise(MADV_DONTNEED) on the whole pages inside
 *                                         the range: they leave the process's memory (what
 *                                         was written stays in the file's page cache)
 *
 * Errors throw with the errno's name as `code` (as node:fs does).
 */
#ifndef __linux__
#error "agw_mmap is for Linux (posix_fallocate, MADV_DONTNEED): elsewhere the daemon uses pread and write"
#endif
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHECK(call)                                   \
  do {                                                \
    if ((call) != napi_ok) return NULL;               \
  } while (0)

static napi_value fail(napi_env env, int err, const char *what) {
  char message[160], code[16];
  const char *name = err == ENOMEM ? "ENOMEM" : err == EBADF ? "EBADF" : err == EACCES ? "EACCES" : err == ENOSPC ? "ENOSPC" : err == EINVAL ? "EINVAL" :
                     err == ENODEV ? "ENODEV" : err == EFBIG ? "EFBIG" : err == EOPNOTSUPP ? "EOPNOTSUPP" : err == EPERM ? "EPERM" : err == EROFS ? "EROFS" :
                     err == EAGAIN ? "EAGAIN" : err == EIO ? "EIO" : NULL;
  if (name == NULL) {
    snprintf(code, sizeof code, "E%d", err);
    name = code;
  }
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, name, message);
  return NULL;
}

/* What map() returns carries this tag: unmap() and release() touch nothing else (a pooled Buffer, the heap). */
static const napi_type_tag MAPPED = {0x6167775f6d6d6170ULL, 0x6d617070696e6773ULL};

/* The buffer argument, if map() made it; else throws and returns false. */
static bool mapped_arg(napi_env env, napi_value v, const char *usage) {
  bool tagged = false;
  if (napi_check_object_type_tag(env, v, &MAPPED, &tagged) != napi_ok || !tagged) {
    napi_throw_type_error(env, "EINVAL", usage);
    return false;
  }
  return true;
}

static napi_status int_arg(napi_env env, napi_value v, int64_t *out) {
  return napi_get_value_int64(env, v, out);
}

static void release(napi_env env, void *data, void *hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

static napi_value map(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  int64_t fd, length;
  bool writable;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 3 || int_arg(env, argv[0], &fd) != napi_ok || int_arg(env, argv[1], &length) != napi_ok || napi_get_value_bool(env, argv[2], &writable) != napi_ok ||
      fd < 0 || length <= 0) {
    napi_throw_type_error(env, "EINVAL", "map(fd, length, writable): a descriptor, a positive length and a boolean");
    return NULL;
  }
  void *at = mmap(NULL, (size_t)length, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, (int)fd, 0);
  if (at == MAP_FAILED) return fail(env, errno, "mmap");
  napi_value buffer;
  if (napi_create_external_buffer(env, (size_t)length, at, release, (void *)(uintptr_t)length, &buffer) != napi_ok) {
    munmap(at, (size_t)length);
    return fail(env, ENOMEM, "a buffer for the mapping");
  }
  if (napi_type_tag_object(env, buffer, &MAPPED) != napi_ok) return fail(env, EINVAL, "tagging the mapping");
  return buffer;
}

static napi_value unmap(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_value ab;
  bool detached = false;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || !mapped_arg(env, argv[0], "unmap(buffer): a buffer that map() returned")) return NULL;
  if (napi_get_typedarray_info(env, argv[0], NULL, NULL, NULL, &ab, NULL) != napi_ok) return NULL;
  CHECK(napi_is_detached_arraybuffer(env, ab, &detached));
  if (!detached) CHECK(napi_detach_arraybuffer(env, ab));
  return NULL;
}

static napi_value allocate(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int64_t fd, length;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 2 || int_arg(env, argv[0], &fd) != napi_ok || int_arg(env, argv[1], &length) != napi_ok || fd < 0 || length <= 0) {
    napi_throw_type_error(env, "EINVAL", "allocate(fd, length): a descriptor and a positive length");
    return NULL;
  }
  int err = posix_fallocate((int)fd, 0, (off_t)length);
  if (err != 0) return fail(env, err, "posix_fallocate");
  return NULL;
}

static napi_value release_pages(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  void *data;
  size_t size;
  int64_t offset, length;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 3 || !mapped_arg(env, argv[0], "release(buffer, offset, length): a buffer that map() returned")) return NULL;
  if (napi_get_buffer_info(env, argv[0], &data, &size) != napi_ok || int_arg(env, argv[1], &offset) != napi_ok ||
      int_arg(env, argv[2], &length) != napi_ok || offset < 0 || length < 0 || (uint64_t)offset + (uint64_t)length > size) {
    napi_throw_type_error(env, "EINVAL", "release(buffer, offset, length): a range inside a buffer that map() returned");
    return NULL;
  }
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t from = ((uintptr_t)data + (uintptr_t)offset + page - 1) & ~(uintptr_t)(page - 1);
  uintptr_t to = ((uintptr_t)data + (uintptr_t)offset + (uintptr_t)length) & ~(uintptr_t)(page - 1);
  if (to > from && madvise((void *)from, to - from, MADV_DONTNEED) != 0) return fail(env, errno, "madvise");
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor fns[] = {
      {"map", NULL, map, NULL, NULL, NULL, napi_default, NULL},
      {"unmap", NULL, unmap, NULL, NULL, NULL, napi_default, NULL},
      {"allocate", NULL, allocate, NULL, NULL, NULL, napi_default, NULL},
      {"release", NULL, release_pages, NULL, NULL, NULL, napi_default, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
