/*===- mp/gpu_binary.h - the multi-architecture kernel container ----------===*
 *
 * mp-compile embeds one container per GPU module: the cubins (or PTX) of
 * every architecture it compiled for. The runtime's mgpuModuleLoad picks the
 * image for the device it runs on. All integers are little-endian.
 *
 *   offset 0   char     magic[8] = "MPGPUBIN"
 *          8   uint32_t version  = MP_GPU_BINARY_VERSION
 *         12   uint32_t count
 *         16   mp_gpu_image_entry entries[count]     (24 bytes each)
 *              payloads (offsets are from the container start)
 *
 * A PTX payload is text whose last byte is NUL (its size counts the NUL).
 * Payloads need no alignment: the runtime copies a misaligned cubin before
 * handing it to the driver.
 *
 * Selection, for a device of compute capability X.Y (sm = 10 * X + Y):
 *   1. a cubin for exactly sm;
 *   2. else the cubin of the highest sm_XZ with the same major X and Z <= Y
 *      (cubins run on later minor versions of their major);
 *   3. else the PTX of the highest sm <= the device's (the driver compiles
 *      it for the device);
 *   4. else nothing: the library has no image for the device.
 *
 * Plain C with static inline helpers, so that both the compiler (which
 * writes containers) and the runtime (which reads them) include it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MP_GPU_BINARY_H
#define MP_GPU_BINARY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MP_GPU_BINARY_MAGIC "MPGPUBIN"
#define MP_GPU_BINARY_MAGIC_SIZE 8u
#define MP_GPU_BINARY_VERSION 1u
/** Bytes before the entries: magic, version, count. */
#define MP_GPU_BINARY_HEADER_SIZE 16u
/** Bytes of one serialized entry. */
#define MP_GPU_BINARY_ENTRY_SIZE 24u

/** Kinds of image. */
enum { MP_GPU_IMAGE_CUBIN = 0, MP_GPU_IMAGE_PTX = 1 /* NUL-terminated */ };

/** One image: for sm_XY, `sm` is XY (80, 90, ...). */
typedef struct mp_gpu_image_entry {
  uint32_t sm;
  uint32_t kind;
  uint64_t offset;
  uint64_t size;
} mp_gpu_image_entry;

/** Why a container does not parse. */
typedef enum mp_gpu_binary_error {
  MP_GPU_BINARY_OK = 0,
  MP_GPU_BINARY_TRUNCATED = 1,   /* entries or a payload past the end */
  MP_GPU_BINARY_BAD_VERSION = 2, /* a version this header does not know */
  MP_GPU_BINARY_BAD_ENTRY = 3    /* unknown kind, PTX without its NUL */
} mp_gpu_binary_error;

static inline uint32_t mp_gpu_binary_read_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static inline uint64_t mp_gpu_binary_read_u64(const unsigned char *p) {
  return (uint64_t)mp_gpu_binary_read_u32(p) |
         (uint64_t)mp_gpu_binary_read_u32(p + 4) << 32;
}

/** Whether `data` starts with the container magic. */
static inline int mp_gpu_binary_is_container(const void *data, size_t size) {
  return data && size >= MP_GPU_BINARY_MAGIC_SIZE &&
         memcmp(data, MP_GPU_BINARY_MAGIC, MP_GPU_BINARY_MAGIC_SIZE) == 0;
}

/** Entry `index` of a container that mp_gpu_binary_check accepted. */
static inline mp_gpu_image_entry mp_gpu_binary_entry(const void *data,
                                                     uint32_t index) {
  const unsigned char *p = (const unsigned char *)data +
                           MP_GPU_BINARY_HEADER_SIZE +
                           (size_t)index * MP_GPU_BINARY_ENTRY_SIZE;
  mp_gpu_image_entry entry;
  entry.sm = mp_gpu_binary_read_u32(p);
  entry.kind = mp_gpu_binary_read_u32(p + 4);
  entry.offset = mp_gpu_binary_read_u64(p + 8);
  entry.size = mp_gpu_binary_read_u64(p + 16);
  return entry;
}

/** Checks a container of `size` bytes (magic, version, every entry in
    bounds and well-formed); sets `*count` to its number of images. */
static inline mp_gpu_binary_error
mp_gpu_binary_check(const void *data, size_t size, uint32_t *count) {
  const unsigned char *bytes = (const unsigned char *)data;
  uint32_t n, i;
  *count = 0;
  if (!mp_gpu_binary_is_container(data, size) ||
      size < MP_GPU_BINARY_HEADER_SIZE)
    return MP_GPU_BINARY_TRUNCATED;
  if (mp_gpu_binary_read_u32(bytes + 8) != MP_GPU_BINARY_VERSION)
    return MP_GPU_BINARY_BAD_VERSION;
  n = mp_gpu_binary_read_u32(bytes + 12);
  if ((size - MP_GPU_BINARY_HEADER_SIZE) / MP_GPU_BINARY_ENTRY_SIZE < n)
    return MP_GPU_BINARY_TRUNCATED;
  for (i = 0; i < n; ++i) {
    mp_gpu_image_entry e = mp_gpu_binary_entry(data, i);
    if (e.offset > size || e.size > size - e.offset)
      return MP_GPU_BINARY_TRUNCATED;
    if (e.kind != MP_GPU_IMAGE_CUBIN && e.kind != MP_GPU_IMAGE_PTX)
      return MP_GPU_BINARY_BAD_ENTRY;
    if (e.kind == MP_GPU_IMAGE_PTX &&
        (e.size == 0 || bytes[e.offset + e.size - 1] != '\0'))
      return MP_GPU_BINARY_BAD_ENTRY;
  }
  *count = n;
  return MP_GPU_BINARY_OK;
}

/** The image to load on a device of compute capability `sm` (10 * major +
    minor) among `count` entries, by the rule above: its index, or -1. */
static inline int32_t mp_gpu_binary_select(const mp_gpu_image_entry *entries,
                                           uint32_t count, uint32_t sm) {
  int32_t sameMajor = -1, ptx = -1;
  uint32_t i;
  for (i = 0; i < count; ++i) {
    const mp_gpu_image_entry *e = &entries[i];
    if (e->kind == MP_GPU_IMAGE_CUBIN) {
      if (e->sm == sm)
        return (int32_t)i;
      if (e->sm / 10 == sm / 10 && e->sm < sm &&
          (sameMajor < 0 || e->sm > entries[sameMajor].sm))
        sameMajor = (int32_t)i;
    } else if (e->kind == MP_GPU_IMAGE_PTX && e->sm <= sm &&
               (ptx < 0 || e->sm > entries[ptx].sm)) {
      ptx = (int32_t)i;
    }
  }
  return sameMajor >= 0 ? sameMajor : ptx;
}

#endif /* MP_GPU_BINARY_H */
