/*
 * agw_malloc: how many arenas the C allocator keeps (native/README.md says why).
 *
 *   limitArenas(n) -> boolean   mallopt(M_ARENA_MAX, n): threads that start allocating
 *                               from now on share the arenas that exist (up to n) instead
 *                               of each making its own; false where the C library has no
 *                               such setting (not glibc). glibc fixes its ceiling once a
 *                               process has made more than 8 arenas: call it early (agw
 *                               serve does, when 2 exist); after that it says true and does
 *                               nothing
 *   arenas() -> number          the arenas the C allocator has made so far (malloc_info's
 *                               <heap> elements); -1 where it cannot say
 */
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define CHECK(call)                     \
  do {                                  \
    if ((call) != napi_ok) return NULL; \
  } while (0)

static napi_value limit_arenas(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t n = 0;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || napi_get_value_int32(env, argv[0], &n) != napi_ok || n < 1) {
    napi_throw_range_error(env, "EINVAL", "limitArenas takes a whole number of arenas, at least 1");
    return NULL;
  }
#ifdef __GLIBC__
  CHECK(napi_get_boolean(env, mallopt(M_ARENA_MAX, n) == 1, &out));
#else
  CHECK(napi_get_boolean(env, 0, &out));
#endif
  return out;
}

static napi_value arenas(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  int count = -1;
#ifdef __GLIBC__
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (f != NULL) {
    int ok = malloc_info(0, f) == 0;
    fclose(f);
    if (ok && text != NULL) {
      count = 0;
      for (const char *p = text; (p = strstr(p, "<heap nr=")) != NULL; p++) count++;
    }
    free(text);
  }
#endif
  CHECK(napi_create_int32(env, count, &out));
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor fns[] = {
      {"limitArenas", NULL, limit_arenas, NULL, NULL, NULL, napi_enumerable, NULL},
      {"arenas", NULL, arenas, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
