/* oplab C ABI for kernels compiled into a shared library, version 1 (docs/plugin.md).
 *
 * A plugin is a shared library that exports one symbol, OPLAB_PLUGIN_ENTRY:
 *
 *     OPLAB_PLUGIN_EXPORT const oplab_plugin_v1* oplab_plugin_v1_entry(void);
 *
 * `oplab ... --plugin PATH.so` opens the library, calls that function once, and registers a
 * backend named by the returned description. The harness then evaluates cases through
 * `evaluate`: it validates each case first (the plugin only ever sees valid cases), converts
 * every input to the op's declared dtype, allocates the output and gradient buffers with the
 * shapes the case calls for, and reads them back after the call. A plugin never allocates a
 * result and never chooses a shape, so a result of the wrong size cannot be returned.
 *
 * Memory: every tensor starts 64-byte aligned, in pages of its own with an inaccessible page on
 * either side; the bytes between its ends and those pages hold a signalling NaN of its dtype. A
 * write there fails the case; a read there turns the answer NaN; an access further out, or
 * through a wild pointer, crashes the call, which fails the case (the call runs in a child
 * process of its own unless oplab's caller already is one), never oplab.
 *
 * Plain C99, also valid C++: no C++ types cross this boundary. The version is in the symbol's
 * name: a later, incompatible ABI gets a new symbol and struct (oplab_plugin_v2_entry), and a
 * library may export several. Every string is UTF-8 and NUL-terminated. */
#ifndef OPLAB_PLUGIN_H
#define OPLAB_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes; oplab_plugin_v1.abi_version must hold it. */
#define OPLAB_PLUGIN_ABI_VERSION 1
/* The name of the symbol the harness looks up. */
#define OPLAB_PLUGIN_ENTRY "oplab_plugin_v1_entry"

#if defined(_WIN32)
#define OPLAB_PLUGIN_EXPORT_ATTR __declspec(dllexport)
#else
#define OPLAB_PLUGIN_EXPORT_ATTR __attribute__((visibility("default")))
#endif
#ifdef __cplusplus
#define OPLAB_PLUGIN_EXPORT extern "C" OPLAB_PLUGIN_EXPORT_ATTR
#else
#define OPLAB_PLUGIN_EXPORT OPLAB_PLUGIN_EXPORT_ATTR
#endif

/* Element types. Buffers hold native-endian values: float64 as `double`, float32 as `float`,
 * float16 as the IEEE 754 binary16 bit pattern in a uint16_t, bfloat16 as the upper 16 bits
 * of the float32 bit pattern in a uint16_t. Any other value in a declaration is refused when
 * the plugin is loaded. */
#define OPLAB_DTYPE_FLOAT64 1
#define OPLAB_DTYPE_FLOAT32 2
#define OPLAB_DTYPE_FLOAT16 3
#define OPLAB_DTYPE_BFLOAT16 4

/* What evaluate returns. For every code but OPLAB_OK it also writes one line into `message`. */
#define OPLAB_OK 0          /* outputs (and gradients, when asked) are written */
#define OPLAB_UNSUPPORTED 1 /* a valid case this kernel does not handle (a mode, a size) */
#define OPLAB_INVALID 2     /* the kernel rejects the case as invalid (the harness already
                               validated it against the op's rules, so this is a finding) */
#define OPLAB_FAILED 3      /* the kernel failed (out of memory, a device error) */

/* One op the plugin evaluates. */
typedef struct oplab_op_v1 {
  const char* name; /* an oplab op: "roi_align", "deform_conv2d", ... (`oplab backends` lists them) */
  int32_t dtype;    /* OPLAB_DTYPE_*: the type of every buffer of this op, inputs and results */
  int32_t grads;    /* non-zero: also evaluates the backward (cases with grad_output) */
} oplab_op_v1;

/* One dense row-major tensor. Inputs are the harness's copies: read them, never write them (a
 * call that changes an input fails its case), and do not keep the pointers past the call.
 * "output" is filled with a signalling NaN before the call: write every element (one left
 * unwritten fails the case; one read before it is written turns NaN). Gradients are zero-filled
 * (a backward scatters into them). The answer must depend on the call alone, not on earlier
 * calls (the determinism property evaluates a case twice). */
typedef struct oplab_tensor_v1 {
  const char* name;     /* the case's tensor name: "input", "rois", "offset", ...; a gradient is
                           named after its input; the forward result is "output" */
  int32_t dtype;        /* OPLAB_DTYPE_*, the op's declared dtype */
  int32_t rank;         /* number of dimensions */
  const int64_t* shape; /* rank extents, outermost first */
  int64_t numel;        /* product of the extents (elements in `data`) */
  void* data;           /* numel elements of `dtype`, contiguous */
} oplab_tensor_v1;

/* One evaluation. Index-valued data travel in the op's dtype like everything else: the batch
 * index column of `rois` is a small integer, exact in every dtype for batch sizes up to 256
 * (bfloat16's 8-bit significand); round it to the nearest integer before use. */
typedef struct oplab_call_v1 {
  const char* op;          /* one of the declared ops */
  const char* params_json; /* the case's params as a JSON object, e.g.
                              {"aligned":true,"output_size":[2,2],"pool_mode":"avg",...}; the
                              harness has checked them against the op's rules (docs/spec.md) */
  int32_t dtype;           /* the op's declared dtype, repeated for convenience */
  int32_t n_inputs;        /* inputs the case supplies (optional ones may be absent) */
  const oplab_tensor_v1* inputs;
  const oplab_tensor_v1* grad_output; /* NULL: forward only. Otherwise also write `grads`. */
  int32_t n_outputs;       /* 1: "output" */
  oplab_tensor_v1* outputs;
  int32_t n_grads;         /* with grad_output: one per differentiable input the case
                              supplies, in the inputs' order; otherwise 0 */
  oplab_tensor_v1* grads;
} oplab_call_v1;

/* What the entry point returns: a pointer to static data that stays valid while the library
 * is loaded. */
typedef struct oplab_plugin_v1 {
  uint32_t abi_version;    /* OPLAB_PLUGIN_ABI_VERSION; any other value: the load is refused */
  const char* name;        /* backend name on the command line and in every record:
                              letters, digits, '-', '_', '.' */
  const char* description; /* one line for `oplab backends` */
  int32_t n_ops;           /* at least 1 */
  const oplab_op_v1* ops;
  /* Evaluates one case. Returns OPLAB_OK or another code with a one-line message (no newline)
   * written into `message`, a buffer of `message_size` bytes the harness owns; it reads the
   * message up to the first NUL or the end of the buffer. Called from one thread at a time,
   * always in a process other than the one that loaded the library's caller: a campaign's
   * worker or per-case child, or a child forked for the call (a crash fails that case only;
   * a hang is killed at the campaign's timeout). Return; never exit the process. */
  int32_t (*evaluate)(const oplab_call_v1* call, char* message, size_t message_size);
} oplab_plugin_v1;

typedef const oplab_plugin_v1* (*oplab_plugin_v1_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* OPLAB_PLUGIN_H */
