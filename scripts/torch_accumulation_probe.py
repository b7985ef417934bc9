"""Which type torch's kernels add in, measured: one JSON line per (op, pass) on stdout.

    python3 scripts/torch_accumulation_probe.py [--device cpu|cuda] [--dtype float16|bfloat16]

A backend of oplab declares the type it accumulates in (docs/spec.md §15); a wrong declaration
either forgives a real bug (declared narrower than it adds) or calls a correct kernel wrong
(declared wider). Each probe below is built so that the sum of many equal terms tells the two
apart exactly: the terms are 1 (or a power of two), the exact sum is a power of two above 2048
(float16's last exact integer; 256 for bfloat16), and a sum held in the narrow type stops
growing at that limit, while one held in float32 reaches it. The line says "narrow" when the
answer stopped short, "float32" when it is exact, with the value beside it.
"""
import argparse
import json

import torch
import torch.nn.functional as F
import torchvision.ops as ops

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
parser.add_argument("--dtype", default="float16")
args = parser.parse_args()
dev = args.device
dt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[args.dtype]
# n equal terms of 1: 2^13 lies past both types' last exact integer (2048, 256), so a narrow
# sum stops far below it, while float32 holds every partial sum exactly.
N = 8192


def report(op, pass_, value, exact):
    kind = "float32" if abs(value - exact) <= 1e-3 * exact else "narrow"
    print(json.dumps({"op": op, "pass": pass_, "device": dev, "dtype": args.dtype, "value": value,
                      "exact": exact, "adds_in": kind}), flush=True)


def ones(*shape, grad=False):
    t = torch.ones(*shape, dtype=dt, device=dev)
    return t.requires_grad_(grad)


# roi_align / ps_roi_align forward: one bin of side^2 samples (sampling_ratio = side), each 1;
# the mean is 1 when summed in float32, 2048 / 4096 = 0.5 when summed in half.
def probe_1():
    x = ones(1, 1, side, side)
    report("roi_align", "forward", float(ops.roi_align(x, box, 1, 1.0, side, False)), 1.0)
    report("ps_roi_align", "forward", float(ops.ps_roi_align(x, box, 1, 1.0, side)), 1.0)
    report("ps_roi_pool", "forward", float(ops.ps_roi_pool(x, box, 1, 1.0)), 1.0)

# Backward: a 1x1 map whose one pixel takes every sample of a box inside it with weight 1
# (H = W = 1: both bilinear taps are pixel 0); one bin of 64 x 64 samples, each passed
# grad_output / 4096, so grad_output = 4096 makes each term 1 and the exact sum 4096.
def probe_2():
    x1 = ones(1, 1, 1, 1, grad=True)
    tiny = torch.tensor([[0, 0, 0, 0.5, 0.5]], dtype=dt, device=dev)
    out = ops.roi_align(x1, tiny, 1, 1.0, 64, False)
    (g,) = torch.autograd.grad(out, x1, torch.full_like(out, 4096.0))
    report("roi_align", "backward", float(g), 4096.0)

# grid_sample backward: N grid points on one pixel, each passing a gradient of 1.
def probe_3():
    img = ones(1, 1, 1, 1, grad=True)
    grid = torch.zeros(1, 1, N, 2, dtype=dt, device=dev)
    out = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=True)
    (g,) = torch.autograd.grad(out, img, torch.ones_like(out))
    report("grid_sample", "backward", float(g), float(N))

# interpolate: area mean of a 1 x N row of ones (forward); bilinear 1x1 -> 1xN backward with a
# grad_output of ones gives the one input pixel N.
def probe_4():
    row = ones(1, 1, 1, N)
    report("interpolate", "forward(area)", float(F.interpolate(row, size=(1, 1), mode="area")), 1.0)
    px = ones(1, 1, 1, 1, grad=True)
    out = F.interpolate(px, size=(1, N), mode="bilinear", align_corners=False)
    (g,) = torch.autograd.grad(out, px, torch.ones_like(out))
    report("interpolate", "backward(bilinear)", float(g), float(N))

# deform_conv2d forward: N input channels of ones, a 1x1 kernel of ones, zero offsets: the
# output is the sum over channels, N.
# deform_conv2d backward of the offset-free input: one pixel read by N output channels.
def probe_5():
    xc = ones(1, N, 1, 1)
    w = ones(1, N, 1, 1)
    off = torch.zeros(1, 2, 1, 1, dtype=dt, device=dev)
    report("deform_conv2d", "forward", float(ops.deform_conv2d(xc, off, w)), float(N))
    xg = ones(1, 1, 1, 1, grad=True)
    wn = ones(N, 1, 1, 1)
    out = ops.deform_conv2d(xg, off, wn)
    (g,) = torch.autograd.grad(out, xg, torch.ones_like(out))
    report("deform_conv2d", "backward(input)", float(g), float(N))


side = 64  # a side x side map of ones pooled into one bin: side^2 = 4096 terms of 1 / 4096
box = torch.tensor([[0, 0, 0, side, side]], dtype=dt, device=dev)
for probe in [probe_1, probe_2, probe_3, probe_4, probe_5]:
    try:
        probe()
    except (RuntimeError, NotImplementedError) as e:  # torch has no kernel of it here
        print(json.dumps({"probe": probe.__name__, "device": dev, "dtype": args.dtype,
                          "error": " ".join(str(e).split())[:200]}), flush=True)
