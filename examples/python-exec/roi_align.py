#!/usr/bin/env python3
"""roi_align (avg, torchvision semantics) in numpy, served to oplab over the line protocol.

    oplab fuzz --exec np='python3 examples/python-exec/roi_align.py' --backend np --op roi_align --cases 200

Forward only, in float64. Each bin averages a gh x gw grid of bilinear samples; y and x are
independent, so the samples of one roi reduce to two small weight matrices, Wy (PH x H) and
Wx (PW x W), and the output is Wy . X . Wx^T per channel.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import oplab_backend as ob  # noqa: E402

# Set by the buggy copy (roi_align_buggy.py) to reproduce a classic edge bug.
EDGE_BUG = False


def grid_size(sampling_ratio, extent, pooled):
    if sampling_ratio > 0:
        return sampling_ratio
    g = math.ceil(extent / pooled) if math.isfinite(extent) else (0 if math.isnan(extent) else 2**31 - 1)
    return int(g)


def axis_weights(start, bin_len, pooled, g, size):
    """Weights (pooled x size) of the samples of every bin along one axis, summed over the grid,
    and which pixels the samples read at all (a weight of 0 still reads: 0 * NaN is NaN).

    The sample rule: out of range below -1 or above size; within one pixel outside the image
    the coordinate is clamped (the edge value replicated); the last row reads itself only.
    """
    w = np.zeros((pooled, size))
    touched = np.zeros((pooled, size), dtype=bool)
    if g <= 0 or size <= 0:
        return w, touched
    p = np.arange(pooled, dtype=np.float64)[:, None]
    i = np.arange(g, dtype=np.float64)[None, :]
    c = (start + p * bin_len) + (i + 0.5) * bin_len / g  # pooled x g sample coordinates
    low = 0.0 if EDGE_BUG else -1.0  # the bug: [-1, 0) read as outside instead of clamped
    inside = (c >= low) & (c <= size)
    c = np.where(inside, np.maximum(c, 0.0), 0.0)
    i0 = np.floor(c).astype(np.int64)
    last = i0 >= size - 1
    i0 = np.where(last, size - 1, i0)
    i1 = np.where(last, size - 1, i0 + 1)
    c = np.where(last, float(size - 1), c)
    lo = c - i0
    hi = 1.0 - lo
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
    x = inputs["input"].numpy()
    rois = inputs["rois"].numpy()
    ph_n, pw_n = params["output_size"]
    scale = float(params.get("spatial_scale", 1.0))
    ratio = int(params.get("sampling_ratio", -1))
    aligned = bool(params.get("aligned", False))
    n, ch, h, w = x.shape
    out = np.zeros((rois.shape[0], ch, ph_n, pw_n))
    off = 0.5 if aligned else 0.0
    finite = bool(np.isfinite(x).all())
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph_n, rw / pw_n
        gh, gw = grid_size(ratio, rh, ph_n), grid_size(ratio, rw, pw_n)
        count = max(gh * gw, 1)
        wy, ty = axis_weights(sy, bh, ph_n, gh, h)
        wx, tx = axis_weights(sx, bw, pw_n, gw, w)
        plane = x[int(b)]
        if finite:
            out[k] = np.einsum("ph,chw,qw->cpq", wy, plane, wx) / count
        else:
            # NaN and Inf must reach only the bins whose samples read them (0 * inf is NaN).
            for p in range(ph_n):
                rows = np.nonzero(ty[p])[0]
                for q in range(pw_n):
                    cols = np.nonzero(tx[q])[0]
                    acc = np.zeros(ch)
                    for r in rows:
                        for s in cols:
                            acc = acc + wy[p, r] * wx[q, s] * plane[:, r, s]
                    out[k, :, p, q] = acc / count
    return out


if __name__ == "__main__":
    ob.serve(name="numpy-roi-align" + ("-buggy" if EDGE_BUG else ""), dtype="float64",
             description="roi_align avg in numpy (examples/python-exec)")
