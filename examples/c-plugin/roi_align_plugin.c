/* A float32 roi_align (avg and max, forward and backward) as an oplab plugin, in plain C99,
 * computed the way the float32 kernels people ship compute it (torchvision's CPU kernel among
 * them): everything is float. spatial_scale is a float; boxes, bin sizes, the adaptive grid
 * (ceilf of a float extent) and sample positions are formed in float from the float32 rois with
 * the operation order of docs/spec.md §4 (start = x1 * s - off, then sy + ph * bin_h +
 * (iy + 0.5) * bin_h / gh); bilinear weights are floats, samples are summed in float, the
 * gradient is accumulated in float, and results are stored as float32. oplab judges it at the
 * precision it declares (OPLAB_DTYPE_FLOAT32): within the rounding of its sums and of its
 * coordinates, its discrete decisions checked against the reference on the float32-formed case.
 *
 * Built twice from this file (CMakeLists.txt): as it is, and with ROI_ALIGN_CLAMP_BUG, an
 * edge-case bug the fuzzer must catch: an aligned box with x2 < x1 (or y2 < y1) is clamped to
 * zero extent, where the contract keeps the reversed extent (a fixed sampling grid then walks
 * backwards over a mirrored box). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oplab/plugin.h"

#ifdef ROI_ALIGN_CLAMP_BUG
#define PLUGIN_NAME "c-roi-align-clampbug"
#define PLUGIN_DESCRIPTION "float32 roi_align in C with a seeded bug: reversed aligned boxes clamped to empty"
#else
#define PLUGIN_NAME "c-roi-align"
#define PLUGIN_DESCRIPTION "float32 roi_align in C (example plugin)"
#endif

/* ---- the few params this kernel reads (output_size comes from the output's shape) ---- */

/* Points at the value of "key" in a flat JSON object, or NULL. The harness writes params
 * compactly and in canonical form, so a textual search for the quoted key is enough here. */
static const char* json_value(const char* json, const char* key) {
  char quoted[64];
  snprintf(quoted, sizeof quoted, "\"%s\"", key);
  const char* p = strstr(json, quoted);
  if (!p) return NULL;
  p += strlen(quoted);
  while (*p == ' ' || *p == ':') ++p;
  return p;
}

typedef struct {
  float spatial_scale;
  long sampling_ratio;
  int aligned;
  int max_mode;
} Params;

static Params read_params(const char* json) {
  Params p = {1.0f, -1, 0, 0}; /* the defaults of docs/spec.md */
  const char* v;
  if ((v = json_value(json, "spatial_scale"))) p.spatial_scale = (float)strtod(v, NULL);
  if ((v = json_value(json, "sampling_ratio"))) p.sampling_ratio = strtol(v, NULL, 10);
  if ((v = json_value(json, "aligned"))) p.aligned = strncmp(v, "true", 4) == 0;
  if ((v = json_value(json, "pool_mode"))) p.max_mode = strncmp(v, "\"max\"", 5) == 0;
  return p;
}

/* ---- geometry (float) ---- */

typedef struct {
  long n, gh, gw;
  float sy, sx, bin_h, bin_w;
} Box;

static long grid_size(long sampling_ratio, float extent, long pooled) {
  if (sampling_ratio > 0) return sampling_ratio;
  {
    const float g = ceilf(extent / (float)pooled);
    if (g != g) return 0;
    if (g >= 2147483647.0f) return 2147483647L;
    if (g <= -2147483647.0f) return -2147483647L;
    return (long)g;
  }
}

static Box make_box(const float* roi, const Params* p, long PH, long PW) {
  Box b;
  const float off = p->aligned ? 0.5f : 0.0f;
  float ex, ey, rw, rh;
  b.n = lroundf(roi[0]);
  b.sx = roi[1] * p->spatial_scale - off;
  b.sy = roi[2] * p->spatial_scale - off;
  ex = roi[3] * p->spatial_scale - off;
  ey = roi[4] * p->spatial_scale - off;
  rw = ex - b.sx;
  rh = ey - b.sy;
  if (!p->aligned) {
    if (rw < 1.0f) rw = 1.0f;
    if (rh < 1.0f) rh = 1.0f;
  }
#ifdef ROI_ALIGN_CLAMP_BUG
  if (rw < 0.0f) rw = 0.0f;
  if (rh < 0.0f) rh = 0.0f;
#endif
  b.bin_h = rh / (float)PH;
  b.bin_w = rw / (float)PW;
  b.gh = grid_size(p->sampling_ratio, rh, PH);
  b.gw = grid_size(p->sampling_ratio, rw, PW);
  return b;
}

static long grid_count(const Box* b) {
  long c = b->gh * b->gw;
  return c > 1 ? c : 1;
}

static float sample_at(float start, long bin_index, float bin, long i, long g) {
  return (start + (float)bin_index * bin) + ((float)i + 0.5f) * bin / (float)g;
}

/* The bilinear rule of roi_align: corners and weights, or in_range = 0. */
typedef struct {
  int in_range;
  long y0, y1, x0, x1;
  float w00, w01, w10, w11;
} Bilinear;

static void axis(float c, long size, long* i0, long* i1, float* l) {
  if (c < 0) c = 0;
  *i0 = (long)floorf(c);
  if (*i0 >= size - 1) {
    *i0 = *i1 = size - 1;
    c = (float)(size - 1);
  } else {
    *i1 = *i0 + 1;
  }
  *l = c - (float)*i0;
}

static Bilinear bilinear(float y, float x, long H, long W) {
  Bilinear b;
  float ly, lx;
  memset(&b, 0, sizeof b);
  if (H <= 0 || W <= 0) return b;
  if (!(y >= -1.0f && y <= (float)H && x >= -1.0f && x <= (float)W)) return b;
  b.in_range = 1;
  axis(y, H, &b.y0, &b.y1, &ly);
  axis(x, W, &b.x0, &b.x1, &lx);
  b.w00 = (1.0f - ly) * (1.0f - lx);
  b.w01 = (1.0f - ly) * lx;
  b.w10 = ly * (1.0f - lx);
  b.w11 = ly * lx;
  return b;
}

static float value(const float* plane, long W, const Bilinear* b) {
  if (!b->in_range) return 0.0f;
  return b->w00 * plane[b->y0 * W + b->x0] + b->w01 * plane[b->y0 * W + b->x1] +
         b->w10 * plane[b->y1 * W + b->x0] + b->w11 * plane[b->y1 * W + b->x1];
}

static void scatter(float* plane, long W, const Bilinear* b, float g) {
  if (!b->in_range) return;
  plane[b->y0 * W + b->x0] += g * b->w00;
  plane[b->y0 * W + b->x1] += g * b->w01;
  plane[b->y1 * W + b->x0] += g * b->w10;
  plane[b->y1 * W + b->x1] += g * b->w11;
}

/* ---- one bin: avg, or max with its winning sample ---- */

static float bin_value(const float* plane, long H, long W, const Box* b, long ph, long pw, int max_mode,
                       Bilinear* winner, int* has_winner) {
  float sum = 0.0f, best = 0.0f;
  int any = 0;
  long iy, ix;
  *has_winner = 0;
  for (iy = 0; iy < b->gh; ++iy) {
    const float y = sample_at(b->sy, ph, b->bin_h, iy, b->gh);
    for (ix = 0; ix < b->gw; ++ix) {
      const float x = sample_at(b->sx, pw, b->bin_w, ix, b->gw);
      const Bilinear bl = bilinear(y, x, H, W);
      const float v = value(plane, W, &bl);
      any = 1;
      if (!max_mode) {
        sum += v;
      } else if (v == v && (!*has_winner || v > best)) { /* NaN never wins; strict >, first wins */
        best = v;
        *winner = bl;
        *has_winner = 1;
      }
    }
  }
  if (!max_mode) return sum / (float)grid_count(b);
  if (any && !*has_winner) return NAN;
  return best;
}

static const oplab_tensor_v1* find(const oplab_tensor_v1* ts, int n, const char* name) {
  int i;
  for (i = 0; i < n; ++i)
    if (strcmp(ts[i].name, name) == 0) return &ts[i];
  return NULL;
}

static int32_t evaluate(const oplab_call_v1* call, char* message, size_t message_size) {
  const oplab_tensor_v1* input = find(call->inputs, call->n_inputs, "input");
  const oplab_tensor_v1* rois = find(call->inputs, call->n_inputs, "rois");
  const oplab_tensor_v1* out = &call->outputs[0];
  Params p;
  long N, C, H, W, K, PH, PW, k, c, ph, pw;
  float* grad = NULL;
  if (strcmp(call->op, "roi_align") != 0 || call->dtype != OPLAB_DTYPE_FLOAT32) {
    snprintf(message, message_size, "only roi_align in float32");
    return OPLAB_UNSUPPORTED;
  }
  if (!input || !rois) {
    snprintf(message, message_size, "roi_align needs input and rois");
    return OPLAB_INVALID;
  }
  p = read_params(call->params_json);
  N = (long)input->shape[0], C = (long)input->shape[1], H = (long)input->shape[2], W = (long)input->shape[3];
  K = (long)rois->shape[0], PH = (long)out->shape[2], PW = (long)out->shape[3];
  if (call->grad_output) {
    grad = (float*)calloc((size_t)(N * C * H * W) + 1, sizeof(float));
    if (!grad) {
      snprintf(message, message_size, "out of memory for the gradient");
      return OPLAB_FAILED;
    }
  }
  for (k = 0; k < K; ++k) {
    const Box b = make_box((const float*)rois->data + k * 5, &p, PH, PW);
    for (c = 0; c < C; ++c) {
      const long plane_off = (b.n * C + c) * H * W;
      const float* plane = (const float*)input->data + plane_off;
      for (ph = 0; ph < PH; ++ph)
        for (pw = 0; pw < PW; ++pw) {
          const long o = ((k * C + c) * PH + ph) * PW + pw;
          Bilinear winner;
          int has_winner;
          ((float*)out->data)[o] = bin_value(plane, H, W, &b, ph, pw, p.max_mode, &winner, &has_winner);
          if (!grad) continue;
          {
            const float g = ((const float*)call->grad_output->data)[o];
            float* gplane = grad + plane_off;
            long iy, ix;
            if (p.max_mode) {
              if (has_winner) scatter(gplane, W, &winner, g);
              continue;
            }
            for (iy = 0; iy < b.gh; ++iy)
              for (ix = 0; ix < b.gw; ++ix) {
                const Bilinear bl = bilinear(sample_at(b.sy, ph, b.bin_h, iy, b.gh),
                                             sample_at(b.sx, pw, b.bin_w, ix, b.gw), H, W);
                scatter(gplane, W, &bl, g / (float)grid_count(&b));
              }
          }
        }
    }
  }
  if (grad) {
    const oplab_tensor_v1* gi = find(call->grads, call->n_grads, "input");
    if (gi)
      memcpy(gi->data, grad, (size_t)(N * C * H * W) * sizeof(float));
    free(grad);
  }
  return OPLAB_OK;
}

static const oplab_op_v1 kOps[] = {{"roi_align", OPLAB_DTYPE_FLOAT32, 1}};

static const oplab_plugin_v1 kPlugin = {OPLAB_PLUGIN_ABI_VERSION, PLUGIN_NAME, PLUGIN_DESCRIPTION, 1, kOps, evaluate};

OPLAB_PLUGIN_EXPORT const oplab_plugin_v1* oplab_plugin_v1_entry(void) { return &kPlugin; }
