/* A float32 roi_align (avg and max, forward and backward) as an oplab plugin, in plain C99.
 * Boxes, bins and sample positions are formed in double from the float32 rois with the
 * operation order of docs/spec.md §4, values are read as float32 and summed in double, and
 * results are stored as float32.
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
  double spatial_scale;
  long sampling_ratio;
  int aligned;
  int max_mode;
} Params;

static Params read_params(const char* json) {
  Params p = {1.0, -1, 0, 0}; /* the defaults of docs/spec.md */
  const char* v;
  if ((v = json_value(json, "spatial_scale"))) p.spatial_scale = strtod(v, NULL);
  if ((v = json_value(json, "sampling_ratio"))) p.sampling_ratio = strtol(v, NULL, 10);
  if ((v = json_value(json, "aligned"))) p.aligned = strncmp(v, "true", 4) == 0;
  if ((v = json_value(json, "pool_mode"))) p.max_mode = strncmp(v, "\"max\"", 5) == 0;
  return p;
}

/* ---- geometry (double) ---- */

typedef struct {
  long n, gh, gw;
  double sy, sx, bin_h, bin_w;
} Box;

static long grid_size(long sampling_ratio, double extent, long pooled) {
  if (sampling_ratio > 0) return sampling_ratio;
  double g = ceil(extent / (double)pooled);
  if (g != g) return 0;
  if (g > 2147483647.0) return 2147483647L;
  if (g < -2147483647.0) return -2147483647L;
  return (long)g;
}

static Box make_box(const float* roi, const Params* p, long PH, long PW) {
  Box b;
  const double off = p->aligned ? 0.5 : 0.0;
  double ex, ey, rw, rh;
  b.n = lround(roi[0]);
  b.sx = (double)roi[1] * p->spatial_scale - off;
  b.sy = (double)roi[2] * p->spatial_scale - off;
  ex = (double)roi[3] * p->spatial_scale - off;
  ey = (double)roi[4] * p->spatial_scale - off;
  rw = ex - b.sx;
  rh = ey - b.sy;
  if (!p->aligned) {
    if (rw < 1.0) rw = 1.0;
    if (rh < 1.0) rh = 1.0;
  }
#ifdef ROI_ALIGN_CLAMP_BUG
  if (rw < 0.0) rw = 0.0;
  if (rh < 0.0) rh = 0.0;
#endif
  b.bin_h = rh / (double)PH;
  b.bin_w = rw / (double)PW;
  b.gh = grid_size(p->sampling_ratio, rh, PH);
  b.gw = grid_size(p->sampling_ratio, rw, PW);
  return b;
}

static long grid_count(const Box* b) {
  long c = b->gh * b->gw;
  return c > 1 ? c : 1;
}

static double sample_at(double start, long bin_index, double bin, long i, long g) {
  return (start + (double)bin_index * bin) + ((double)i + 0.5) * bin / (double)g;
}

/* The bilinear rule of roi_align: corners and weights, or in_range = 0. */
typedef struct {
  int in_range;
  long y0, y1, x0, x1;
  double w00, w01, w10, w11;
} Bilinear;

static void axis(double c, long size, long* i0, long* i1, double* l) {
  if (c < 0) c = 0;
  *i0 = (long)floor(c);
  if (*i0 >= size - 1) {
    *i0 = *i1 = size - 1;
    c = (double)(size - 1);
  } else {
    *i1 = *i0 + 1;
  }
  *l = c - (double)*i0;
}

static Bilinear bilinear(double y, double x, long H, long W) {
  Bilinear b;
  double ly, lx;
  memset(&b, 0, sizeof b);
  if (H <= 0 || W <= 0) return b;
  if (!(y >= -1.0 && y <= (double)H && x >= -1.0 && x <= (double)W)) return b;
  b.in_range = 1;
  axis(y, H, &b.y0, &b.y1, &ly);
  axis(x, W, &b.x0, &b.x1, &lx);
  b.w00 = (1.0 - ly) * (1.0 - lx);
  b.w01 = (1.0 - ly) * lx;
  b.w10 = ly * (1.0 - lx);
  b.w11 = ly * lx;
  return b;
}

static double value(const float* plane, long W, const Bilinear* b) {
  if (!b->in_range) return 0.0;
  return b->w00 * plane[b->y0 * W + b->x0] + b->w01 * plane[b->y0 * W + b->x1] +
         b->w10 * plane[b->y1 * W + b->x0] + b->w11 * plane[b->y1 * W + b->x1];
}

static void scatter(double* plane, long W, const Bilinear* b, double g) {
  if (!b->in_range) return;
  plane[b->y0 * W + b->x0] += g * b->w00;
  plane[b->y0 * W + b->x1] += g * b->w01;
  plane[b->y1 * W + b->x0] += g * b->w10;
  plane[b->y1 * W + b->x1] += g * b->w11;
}

/* ---- one bin: avg, or max with its winning sample ---- */

static double bin_value(const float* plane, long H, long W, const Box* b, long ph, long pw, int max_mode,
                        Bilinear* winner, int* has_winner) {
  double sum = 0.0, best = 0.0;
  int any = 0;
  long iy, ix;
  *has_winner = 0;
  for (iy = 0; iy < b->gh; ++iy) {
    const double y = sample_at(b->sy, ph, b->bin_h, iy, b->gh);
    for (ix = 0; ix < b->gw; ++ix) {
      const double x = sample_at(b->sx, pw, b->bin_w, ix, b->gw);
      const Bilinear bl = bilinear(y, x, H, W);
      const double v = value(plane, W, &bl);
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
  if (!max_mode) return sum / (double)grid_count(b);
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
  double* grad = NULL;
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
    grad = (double*)calloc((size_t)(N * C * H * W) + 1, sizeof(double));
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
          ((float*)out->data)[o] = (float)bin_value(plane, H, W, &b, ph, pw, p.max_mode, &winner, &has_winner);
          if (!grad) continue;
          {
            const double g = ((const float*)call->grad_output->data)[o];
            double* gplane = grad + plane_off;
            long iy, ix;
            if (p.max_mode) {
              if (has_winner) scatter(gplane, W, &winner, g);
              continue;
            }
            for (iy = 0; iy < b.gh; ++iy)
              for (ix = 0; ix < b.gw; ++ix) {
                const Bilinear bl = bilinear(sample_at(b.sy, ph, b.bin_h, iy, b.gh),
                                             sample_at(b.sx, pw, b.bin_w, ix, b.gw), H, W);
                scatter(gplane, W, &bl, g / (double)grid_count(&b));
              }
          }
        }
    }
  }
  if (grad) {
    const oplab_tensor_v1* gi = find(call->grads, call->n_grads, "input");
    long i;
    if (gi)
      for (i = 0; i < N * C * H * W; ++i) ((float*)gi->data)[i] = (float)grad[i];
    free(grad);
  }
  return OPLAB_OK;
}

static const oplab_op_v1 kOps[] = {{"roi_align", OPLAB_DTYPE_FLOAT32, 1}};

static const oplab_plugin_v1 kPlugin = {OPLAB_PLUGIN_ABI_VERSION, PLUGIN_NAME, PLUGIN_DESCRIPTION, 1, kOps, evaluate};

OPLAB_PLUGIN_EXPORT const oplab_plugin_v1* oplab_plugin_v1_entry(void) { return &kPlugin; }
