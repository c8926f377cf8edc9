{
  "targets": [
    {
      "target_name": "agw_mmap",
      "sources": ["mmap.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "agw_malloc",
      "sources": ["malloc.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
