/* onnx: imports an ONNX model (protobuf, read with the bindings protoc-c generates from Debian's
 * onnx.proto) into a meshpipe workload graph, with a cost per operator.
 *
 * Every tensor gets a static shape: the file's value_info when it gives one, otherwise inferred for
 * the operators of the cost table (an output whose shape cannot be known is an error naming the
 * node).  Initializers are weights, counted in weight_bytes of their first consumer; Constant nodes,
 * and the integer shape arithmetic that static shapes make constant (Shape and what only it feeds),
 * are folded away; Identity and Dropout are removed.  Every other node becomes an op with macs,
 * flops (>= 2 * macs) and weight_bytes; a node type outside the cost table is kept with zero cost
 * and counted in the report.  Fusion (on by default) folds each normalisation, activation, bias or
 * residual-add node into the op producing its input when that op has no other consumer.
 * The cost formulas are listed in traces/README.md ("Cost model per operator").
 * Nothing here prints: warnings come back in an onnx_report. */
#ifndef MESHPIPE_ONNX_IMPORT_H
#define MESHPIPE_ONNX_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "graph.h"

typedef struct onnx_options {
  const char *dtype; /* bytes per element of activations and weights: "fp32", "fp16" (default, also
                        when NULL), "bf16", "int8".  Integer tensors keep their own size. */
  int batch;         /* batch size; 0 = the model's own (dim 0 of its first input, 1 if symbolic) */
  int no_fuse;       /* 1: every kept node is one layer */
} onnx_options;

/* One operator type the cost table does not know, and how many nodes of it were kept at zero cost. */
typedef struct onnx_unknown {
  char *type; /* owned */
  int count;
} onnx_unknown;

typedef struct onnx_report {
  int nodes;       /* nodes in the ONNX graph */
  int layers;      /* ops in the imported graph (after fusion unless no_fuse) */
  int folded;      /* Constant nodes and constant shape arithmetic folded away */
  int removed;     /* Identity / Dropout nodes */
  int fused;       /* nodes folded into their producer */
  int dtype_bytes; /* bytes per float element */
  int batch;       /* batch size of the imported graph */
  int model_batch; /* batch size in the file */
  uint64_t macs, flops, weight_bytes;
  uint64_t params; /* elements of the float initializers the nodes read, shared ones once, without
                      BatchNormalization running mean/var (the torchvision definition) */
  int n_unknown;   /* distinct unknown op types, in order of first appearance */
  onnx_unknown *unknown; /* owned */
} onnx_report;

/* Bytes per element of a dtype name, or 0 when the name is not one of fp32|fp16|bf16|int8. */
int onnx_dtype_bytes(const char *dtype);

/* Imports path into a meshpipe graph document (the format of traces/README.md) with a "source"
 * provenance object.  o may be NULL (defaults).  On success *out is owned by the caller
 * (cJSON_Delete).  rep may be NULL; when given it is filled on success and must be released with
 * onnx_report_free (it is zeroed and owns nothing on failure).  Bad files are MP_INPUT with
 * "FILE: node 'NAME' (TYPE): what"; a bad option is MP_USAGE.  A file over 2 GiB, or whose protobuf
 * messages nest more than 64 deep or would unpack to more than 64 MiB + 32 x its size, is refused
 * before it is unpacked. */
mp_status onnx_import_json(const char *path, const onnx_options *o, cJSON **out, onnx_report *rep, mp_error *err);

/* onnx_import_json of a model already in memory (len bytes, borrowed); path labels the messages. */
mp_status onnx_import_json_mem(const char *path, const void *data, size_t len, const onnx_options *o, cJSON **out,
                               onnx_report *rep, mp_error *err);

/* Like onnx_import_json, then builds and validates the graph (graph_from_json).  *out is owned by the
 * caller (graph_free). */
mp_status onnx_import(const char *path, const onnx_options *o, graph **out, onnx_report *rep, mp_error *err);

/* Formats the one warning line about unknown operator types into buf ("3 nodes of types outside
 * the cost model kept with zero cost: Foo x2, Bar x1"); returns 0 and leaves buf empty when there
 * are none, else 1.  The text is cut to size. */
int onnx_report_warning(const onnx_report *rep, char *buf, size_t size);

/* Releases what rep owns and zeroes it; NULL is a no-op. */
void onnx_report_free(onnx_report *rep);

#endif
