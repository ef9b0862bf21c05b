/* onnx: a look at the protobuf wire format before protobuf-c unpacks it.  protobuf-c unpacks a
 * submessage by recursing, with no limit, and allocates a whole struct for every submessage, however
 * few bytes encode it: an ONNX file of If nodes nested 3 000 deep overflows the stack, and a small
 * file of empty submessages unpacks to a hundred times its size.  onnx_wire_check walks the bytes
 * guided by the generated descriptors, as protobuf-c will, without allocating, and refuses nesting
 * deeper than ONNX_MAX_NESTING or an unpacked size beyond ONNX_UNPACKED_BASE plus
 * ONNX_UNPACKED_PER_BYTE times the file's size.  Malformed
 * bytes are left for protobuf-c to refuse.  See onnx_int.h. */
#include <string.h>

#include "onnx_int.h"

typedef struct wire {
  size_t unpacked; /* what protobuf-c will allocate, bytes (an upper bound) */
  size_t budget;
  int deepest;
  int malformed;
} wire;

/* Reads a varint at *p (< end); 0 when it runs past end or over 10 bytes. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 70 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    x |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
    if (!(b & 0x80)) {
      *v = x;
      return 1;
    }
  }
  return 0;
}

/* Walks the message of type d in [p, end) at nesting depth `depth` (the top level is 1).  Returns 0
 * to stop the walk (too deep, or malformed: protobuf-c then fails on its own). */
static int walk(wire *w, const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end, int depth) {
  if (depth > w->deepest) w->deepest = depth;
  if (depth > ONNX_MAX_NESTING) return 0;
  w->unpacked += d->sizeof_message;
  while (p < end) {
    uint64_t tag, len;
    if (!varint(&p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) {
      w->malformed = 1;
      return 0;
    }
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3));
    int repeated = f && f->label == PROTOBUF_C_LABEL_REPEATED;
    switch (tag & 7) {
    case 0:
      if (!varint(&p, end, &len)) w->malformed = 1;
      break;
    case 1:
    case 5:
      if (end - p < ((tag & 7) == 1 ? 8 : 4))
        w->malformed = 1;
      else
        p += (tag & 7) == 1 ? 8 : 4;
      break;
    case 2:
      if (!varint(&p, end, &len) || len > (uint64_t)(end - p)) {
        w->malformed = 1;
        break;
      }
      if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (!walk(w, f->descriptor, p, p + len, depth + 1)) return 0;
      } else {
        /* a string or bytes is copied with its NUL, an unknown field with its record; a packed
           repeated field holds at most len elements of at most 8 bytes */
        w->unpacked += repeated ? 8 * (size_t)len : (size_t)len + 1 + (f ? 0 : 32);
      }
      p += len;
      break;
    default: w->malformed = 1; break; /* groups (3, 4) and unknown wire types */
    }
    if (w->malformed || p > end) {
      w->malformed = 1;
      return 0;
    }
    w->unpacked += repeated ? 8 : f ? 0 : 32; /* one more array element, or an unknown field's record */
    if (w->unpacked > w->budget) return 0;
  }
  return 1;
}

mp_status onnx_wire_check(const char *file, const void *data, size_t len, mp_error *err) {
  wire w = {.budget = ONNX_UNPACKED_BASE + ONNX_UNPACKED_PER_BYTE * len};
  walk(&w, &onnx__model_proto__descriptor, data, (const uint8_t *)data + len, 1);
  if (w.deepest > ONNX_MAX_NESTING)
    return err_at(err, MP_INPUT, file, NULL,
                  "messages nested more than %d deep (subgraphs of If, Loop or Scan inside each other, or nested "
                  "types): not a model meshpipe imports",
                  ONNX_MAX_NESTING);
  if (w.unpacked > w.budget)
    return err_at(err, MP_INPUT, file, NULL,
                  "would unpack to more than %zu MiB of protobuf messages (%d MiB + %d x its %zu bytes): not a "
                  "model meshpipe imports",
                  w.budget >> 20, ONNX_UNPACKED_BASE >> 20, ONNX_UNPACKED_PER_BYTE, len);
  return MP_OK;
}
