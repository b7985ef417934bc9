/* Plugins that are wrong on purpose, one per BAD_* definition (CMakeLists.txt), for
 * tests/test_plugin_backend.cpp. The kernel is trivial: roi_align's output filled with 1.0,
 * in the declared dtype (float64, so no conversion hides what the test looks at). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "oplab/plugin.h"

static int32_t evaluate(const oplab_call_v1* call, char* message, size_t message_size) {
  int64_t i;
#if defined(BAD_ERROR_CODE)
  (void)call;
  snprintf(message, message_size, "device lost\nsecond line that must not show");
  return OPLAB_FAILED;
#elif defined(BAD_UNKNOWN_CODE)
  (void)call, (void)message, (void)message_size;
  return 42;
#elif defined(BAD_SEGFAULT)
  (void)message, (void)message_size;
  /* Crash only on the cases with an odd batch size: the campaign must record those and go on
   * to the others. */
  if (call->inputs[0].shape[0] % 2 == 1) raise(SIGSEGV);
#elif defined(BAD_OVERRUN)
  (void)message, (void)message_size;
  ((double*)call->outputs[0].data)[call->outputs[0].numel] = 7.0; /* one past the end */
#elif defined(BAD_OVERRUN_FAR)
  (void)message, (void)message_size;
  /* 16 elements (128 bytes) past the end: in the inaccessible page after the buffer. */
  ((double*)call->outputs[0].data)[call->outputs[0].numel + 16] = 7.0;
#elif defined(BAD_UNDERRUN)
  (void)message, (void)message_size;
  ((double*)call->outputs[0].data)[-1] = 7.0; /* one before the start */
#elif defined(BAD_WILD_POINTER)
  (void)message, (void)message_size;
  /* A garbage pointer, as a kernel that indexes with an unchecked offset makes one. */
  {
    volatile uintptr_t garbage = 0x10;
    *(volatile double*)garbage = 7.0;
  }
#elif defined(BAD_READ_PAST_INPUT)
  /* Reads the element after rois' last one (rois has 5 values: it lies in the fill before the
   * next page) into every output: the fill is a signalling NaN, so the answer turns NaN. */
  (void)message, (void)message_size;
  for (i = 0; i < call->outputs[0].numel; ++i)
    ((double*)call->outputs[0].data)[i] = 1.0 + 0.0 * ((const double*)call->inputs[1].data)[call->inputs[1].numel];
  return OPLAB_OK;
#elif defined(BAD_READ_BEFORE_WRITE)
  /* Accumulates into its output as if it were zeroed: it reads what it never wrote. */
  (void)message, (void)message_size;
  for (i = 0; i < call->outputs[0].numel; ++i) ((double*)call->outputs[0].data)[i] += 1.0;
  return OPLAB_OK;
#elif defined(BAD_ECHO_FLOAT16)
  /* Not bad: float16 buffers, the output's elements copied bit for bit from the input's first
   * ones, so that a test sees exactly what the harness encoded and decodes it back. */
  (void)message, (void)message_size;
  for (i = 0; i < call->outputs[0].numel && i < call->inputs[0].numel; ++i)
    ((uint16_t*)call->outputs[0].data)[i] = ((const uint16_t*)call->inputs[0].data)[i];
  return OPLAB_OK;
#else
  (void)message, (void)message_size;
#endif
  for (i = 0; i < call->outputs[0].numel; ++i) ((double*)call->outputs[0].data)[i] = 1.0;
  return OPLAB_OK;
}

#if defined(BAD_UNKNOWN_DTYPE)
static const oplab_op_v1 kOps[] = {{"roi_align", 17, 0}};
#elif defined(BAD_ECHO_FLOAT16)
static const oplab_op_v1 kOps[] = {{"roi_align", OPLAB_DTYPE_FLOAT16, 0}};
#else
static const oplab_op_v1 kOps[] = {{"roi_align", OPLAB_DTYPE_FLOAT64, 0}};
#endif

#if defined(BAD_ABI_VERSION)
static const oplab_plugin_v1 kPlugin = {OPLAB_PLUGIN_ABI_VERSION + 1, "bad", "wrong ABI version", 1, kOps, evaluate};
#else
static const oplab_plugin_v1 kPlugin = {OPLAB_PLUGIN_ABI_VERSION, "bad", "a plugin wrong on purpose", 1, kOps, evaluate};
#endif

#if defined(BAD_NO_SYMBOL)
/* Exported under another name: not an oplab plugin. */
OPLAB_PLUGIN_EXPORT const oplab_plugin_v1* some_other_entry(void) { return &kPlugin; }
#else
OPLAB_PLUGIN_EXPORT const oplab_plugin_v1* oplab_plugin_v1_entry(void) { return &kPlugin; }
#endif
