// Builds MPGPUBIN containers for the tests from a spec such as
// "cubin:80,cubin:90,ptx:70": the payload of each image is its text
// ("cubin-sm80;"; PTX "ptx-sm70;" with a NUL), so that the fake driver
// shows which one was loaded. Payloads are packed without alignment.

#include "mp/gpu_binary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void putU32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = (unsigned char)(v >> (8 * i));
}

static inline void putU64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = (unsigned char)(v >> (8 * i));
}

/// A malloc'ed container of `count` images; its size in `*size`.
static inline unsigned char *packContainer(uint32_t count, const uint32_t *sms,
                                           const uint32_t *kinds,
                                           const void *const *payloads,
                                           const size_t *sizes, size_t *size) {
  size_t total = MP_GPU_BINARY_HEADER_SIZE + count * MP_GPU_BINARY_ENTRY_SIZE;
  for (uint32_t i = 0; i < count; ++i)
    total += sizes[i];
  unsigned char *out = calloc(1, total);
  memcpy(out, MP_GPU_BINARY_MAGIC, 8);
  putU32(out + 8, MP_GPU_BINARY_VERSION);
  putU32(out + 12, count);
  uint64_t offset =
      MP_GPU_BINARY_HEADER_SIZE + count * MP_GPU_BINARY_ENTRY_SIZE;
  for (uint32_t i = 0; i < count; ++i) {
    unsigned char *entry =
        out + MP_GPU_BINARY_HEADER_SIZE + i * MP_GPU_BINARY_ENTRY_SIZE;
    putU32(entry, sms[i]);
    putU32(entry + 4, kinds[i]);
    putU64(entry + 8, offset);
    putU64(entry + 16, sizes[i]);
    memcpy(out + offset, payloads[i], sizes[i]);
    offset += sizes[i];
  }
  *size = total;
  return out;
}

/// The container of a spec such as "cubin:80,ptx:70"; its size in `*size`.
static inline unsigned char *buildContainer(const char *spec, size_t *size) {
  char payloads[16][32];
  const void *data[16];
  size_t sizes[16];
  uint32_t sms[16], kinds[16], count = 0;
  char copy[256];
  snprintf(copy, sizeof(copy), "%s", spec);
  for (char *item = strtok(copy, ","); item && count < 16;
       item = strtok(NULL, ",")) {
    int ptx = strncmp(item, "ptx:", 4) == 0;
    sms[count] = (uint32_t)atoi(strchr(item, ':') + 1);
    kinds[count] = ptx ? MP_GPU_IMAGE_PTX : MP_GPU_IMAGE_CUBIN;
    snprintf(payloads[count], sizeof(payloads[count]), "%s-sm%u;",
             ptx ? "ptx" : "cubin", sms[count]);
    data[count] = payloads[count];
    sizes[count] = strlen(payloads[count]) + ptx; // PTX keeps its NUL
    ++count;
  }
  return packContainer(count, sms, kinds, data, sizes, size);
}
