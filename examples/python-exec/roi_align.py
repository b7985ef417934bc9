#!/usr/bin/env python3
"""roi_align (avg, torchvision semantics) in numpy, served to oplab over the line protocol.

    oplab fuzz --exec np='python3 examples/python-exec/roi_align.py' --backend np --op roi_align --cases 200

Forward only, in float32, the way the kernels people ship compute it (torchvision's CPU kernel
among them): the inputs are float32, the roi's start, extent and bin size, the adaptive grid,
every sample coordinate and every bilinear weight are formed in float32 (spatial_scale too is a
float32: `roi_start_w = offset_rois[1] * spatial_scale - offset`), in the operation order of
docs/spec.md §4, the sums are float32 and so is the output. oplab judges it at the precision it
declares (dtype float32 below): against the double reference on the float32-rounded inputs,
within the rounding of its sums and of its coordinates.

STORAGE and COMPUTE are the types of the tensors (inputs and output) and of the arithmetic:
roi_align_f16.py sets STORAGE to float16 (load half, compute and accumulate in float32, store
half, as production half kernels do).

Each bin averages a gh x gw grid of bilinear samples; y and x are independent, so the samples
of one roi reduce to two small weight matrices, Wy (PH x H) and Wx (PW x W), each the sum of its
axis' sample weights per pixel, and the output is Wy . X . Wx^T per channel.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import oplab_backend as ob  # noqa: E402

# Set by the buggy copy (roi_align_buggy.py) to reproduce a classic edge bug.
EDGE_BUG = False
# The type the inputs arrive in and the output is stored in, and the type of the arithmetic.
STORAGE = np.float32
COMPUTE = np.float32


def grid_size(sampling_ratio, extent, pooled):
    """The grid of one axis: sampling_ratio, or ceil(extent / pooled) in the compute type."""
    if sampling_ratio > 0:
        return sampling_ratio
    g = np.ceil(extent / COMPUTE(pooled))
    if np.isnan(g):
        return 0
    return int(min(max(g, -2**31 + 1), 2**31 - 1))


def axis_weights(start, bin_len, pooled, g, size, samples=None):
    """Weights (pooled x size) of the samples of every bin along one axis, summed over the grid,
    and which pixels the samples read at all (a weight of 0 still reads: 0 * NaN is NaN).

    The sample rule: out of range below -1 or above size; within one pixel outside the image
    the coordinate is clamped (the edge value replicated); the last row reads itself only.
    """
    w = np.zeros((pooled, size), dtype=COMPUTE)
    touched = np.zeros((pooled, size), dtype=bool)
    if g <= 0 or size <= 0:
        if samples is not None:
            samples.extend([] for _ in range(pooled))
        return w, touched
    p = np.arange(pooled, dtype=COMPUTE)[:, None]
    i = np.arange(g, dtype=COMPUTE)[None, :]
    # pooled x g sample coordinates: start + p * bin + (i + 0.5) * bin / g, every step rounded
    c = (start + p * bin_len) + (i + COMPUTE(0.5)) * bin_len / COMPUTE(g)
    low = 0 if EDGE_BUG else -1  # the bug: [-1, 0) read as outside instead of clamped
    inside = (c >= low) & (c <= size)
    c = np.where(inside, np.maximum(c, COMPUTE(0)), COMPUTE(0))
    i0 = np.floor(c).astype(np.int64)
    last = i0 >= size - 1
    i0 = np.where(last, size - 1, i0)
    i1 = np.where(last, size - 1, i0 + 1)
    c = np.where(last, COMPUTE(size - 1), c)
    lo = c - i0.astype(COMPUTE)
    hi = COMPUTE(1) - lo
    if samples is not None:  # each sample's two corners and weights, unmerged, per bin
        for q in range(pooled):
            samples.append([(int(a), int(b), hi[q, j], lo[q, j]) for j, (a, b) in enumerate(zip(i0[q], i1[q])) if inside[q, j]])
    rows = np.broadcast_to(np.arange(pooled)[:, None], c.shape)
    np.add.at(w, (rows[inside], i0[inside]), hi[inside])
    np.add.at(w, (rows[inside], i1[inside]), lo[inside])
    touched[rows[inside], i0[inside]] = True
    touched[rows[inside], i1[inside]] = True
    return w, touched


@ob.op("roi_align", grads=False)
def roi_align(params, inputs, grad_output):
    if params.get("pool_mode", "avg") != "avg":
        raise ob.Unsupported("only pool_mode avg")
    # The tensors as the kernel receives them (oplab sends them already rounded to the declared
    # dtype), widened to the compute type where the arithmetic happens.
    x = inputs["input"].numpy().astype(STORAGE).astype(COMPUTE)
    rois = inputs["rois"].numpy()
    boxes = rois[:, 1:].astype(STORAGE).astype(COMPUTE)
    ph_n, pw_n = params["output_size"]
    scale = COMPUTE(params.get("spatial_scale", 1.0))
    ratio = int(params.get("sampling_ratio", -1))
    aligned = bool(params.get("aligned", False))
    n, ch, h, w = x.shape
    out = np.zeros((rois.shape[0], ch, ph_n, pw_n), dtype=COMPUTE)
    off = COMPUTE(0.5 if aligned else 0.0)
    finite = bool(np.isfinite(x).all())
    for k in range(rois.shape[0]):
        b = int(rois[k, 0])
        x1, y1, x2, y2 = boxes[k]
        sx, sy = x1 * scale - off, y1 * scale - off
        ex, ey = x2 * scale - off, y2 * scale - off
        rw, rh = ex - sx, ey - sy
        if not aligned:
            rw, rh = max(rw, COMPUTE(1)), max(rh, COMPUTE(1))
        bh, bw = rh / COMPUTE(ph_n), rw / COMPUTE(pw_n)
        gh, gw = grid_size(ratio, rh, ph_n), grid_size(ratio, rw, pw_n)
        count = COMPUTE(max(gh * gw, 1))
        wy, ty = axis_weights(sy, bh, ph_n, gh, h)
        wx, tx = axis_weights(sx, bw, pw_n, gw, w)
        plane = x[b]
        if finite:
            out[k] = np.einsum("ph,chw,qw->cpq", wy, plane, wx) / count
        else:
            # NaN and Inf must reach only the bins whose samples read them, and through each
            # corner unmerged: a sample on the last row reads it at weights 1 and 0, and
            # 1 * inf + 0 * inf is NaN where the merged (1 + 0) * inf is not.
            sy_list, sx_list = [], []
            axis_weights(sy, bh, ph_n, gh, h, sy_list)
            axis_weights(sx, bw, pw_n, gw, w, sx_list)
            for p in range(ph_n):
                for q in range(pw_n):
                    acc = np.zeros(ch, dtype=COMPUTE)
                    for y0, y1, hy, ly in sy_list[p]:
                        for x0, x1, hx, lx in sx_list[q]:
                            acc = (acc + (hy * hx) * plane[:, y0, x0] + (hy * lx) * plane[:, y0, x1]
                                   + (ly * hx) * plane[:, y1, x0] + (ly * lx) * plane[:, y1, x1])
                    out[k, :, p, q] = acc / count
    return out.astype(STORAGE)


def serve(name, description):
    """Serves the kernel, declaring STORAGE as its dtype (what oplab judges it in)."""
    ob.serve(name=name, dtype=np.dtype(STORAGE).name, description=description)


if __name__ == "__main__":
    serve("numpy-roi-align" + ("-buggy" if EDGE_BUG else ""),
          "roi_align avg in numpy, float32 (examples/python-exec)")
