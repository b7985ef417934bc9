"""Peer bridge: evaluates oplab cases with torch / torchvision, one JSON line in, one out.

Started once by the C++ backend (peer/torchvision_backend.cpp) as `python3 -u <this file>`
and kept alive. It speaks the line protocol of external backends (docs/protocol.md, protocol 1):
the hello {"oplab": .., "protocol": 1} answers the protocol's hello, naming its ops and the
versions of torch, torchvision and Python (or {"error": .., "kind": "unavailable"} when torch
cannot be imported); then it reads one case per line on stdin (SPEC section 1) and answers:
  {"outputs": {"output": T}, "grads": {name: T, ...}}          on success
  {"error": "<one line>", "kind": "unsupported" | "failed"}    otherwise
with a gradient for each input the case's "meta": {"grads": [...]} names.
A line {"bench": {...}} times one op in float32 (see bench()) and answers {"median_ms": ..}.

Kept deliberately thin: the peer is the oracle, so this file only translates JSON to the
library call and back and never reimplements or patches an op.
"""
import json
import math
import platform
import sys
import warnings

# stderr belongs to the calling program (its CLI promises one-line errors), so library
# warnings must not trickle onto it thousands of times during a fuzz run.
warnings.simplefilter("ignore")

# The dtype the ops run in: float64 (the peer oracle) unless started with `--dtype float32`,
# `float16` or `bfloat16` (the kernels users deploy, judged at their own precision, SPEC 15).
# Inputs arrive as float64 values already rounded to that dtype by the harness; they are
# converted to it, the op runs in it (forward and backward), and the answers go back as float64.
DTYPE = "float64"
if "--dtype" in sys.argv[1:-1]:
    DTYPE = sys.argv[sys.argv.index("--dtype") + 1]
# Where the ops run: the CPU (one thread) unless started with `--device cuda`: torch's CUDA
# kernels, the ones a GPU user deploys. Tensors go to the GPU and the answers come back.
DEVICE = "cpu"
if "--device" in sys.argv[1:-1]:
    DEVICE = sys.argv[sys.argv.index("--device") + 1]
# Inputs that hold integers (ms_deform_attn's level shapes): kept in float64, which the op reads
# as sizes, whatever the dtype.
INTEGER_INPUTS = ("spatial_shapes", "level_start_index")

try:
    import torch
    import torch.nn.functional as F
    import torchvision
    import torchvision.ops

    import msda_pytorch  # beside this file: Deformable DETR's pure-PyTorch ms_deform_attn

    IMPORT_ERROR = None
except Exception as e:  # noqa: BLE001 - any import failure makes the peer unavailable
    IMPORT_ERROR = "%s: %s" % (type(e).__name__, e)

if IMPORT_ERROR is None:
    TORCH_DTYPE = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
                   "bfloat16": torch.bfloat16, "uint8": torch.uint8}.get(DTYPE)
    if TORCH_DTYPE is None:
        IMPORT_ERROR = "the bridge has no dtype %r (float64, float32, float16, bfloat16, uint8)" % DTYPE
    elif DEVICE not in ("cpu", "cuda"):
        IMPORT_ERROR = "the bridge has no device %r (cpu, cuda)" % DEVICE
    elif DEVICE == "cuda" and not torch.cuda.is_available():
        IMPORT_ERROR = "torch %s sees no CUDA device here" % torch.__version__
    # One thread: the harness compares values, and a single thread keeps summation order
    # (and thus rounding) the same from run to run.
    torch.set_num_threads(1)

NONFINITE_IN = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

# The ops this bridge maps onto torchvision / PyTorch calls (call_op). Which inputs get a
# gradient is the harness's knowledge (its op descriptions): each request names them in
# "meta": {"grads": [...]}.
SUPPORTED = ("deform_conv2d", "roi_pool", "roi_align", "ps_roi_align", "ps_roi_pool", "interpolate",
             "ms_deform_attn", "grid_sample")


class Unsupported(Exception):
    pass


def one_line(text):
    return " ".join(str(text).split())


def tensor_from_json(j, name):
    data = j["data"]
    if any(isinstance(v, str) for v in data):
        try:
            data = [NONFINITE_IN[v] if isinstance(v, str) else v for v in data]
        except KeyError as e:
            raise ValueError("%s holds the string %s; only \"nan\", \"inf\", \"-inf\" are numbers"
                             % (name, e)) from None
    t = torch.tensor(data, dtype=torch.float64)
    return t.reshape([int(d) for d in j["shape"]])


def float_to_json(v):
    if v != v:
        return "nan"
    if v == math.inf:
        return "inf"
    if v == -math.inf:
        return "-inf"
    return v


def tensor_to_json(t):
    t = t.detach().to(torch.float64).contiguous()
    data = t.reshape(-1).tolist()
    if not bool(torch.isfinite(t).all()):
        data = [float_to_json(v) for v in data]
    return {"shape": list(t.shape), "data": data}


def as_int(v):
    # JSON does not tell 2 from 2.0, but torch's int arguments do: accept integral floats.
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def int_or_pair(v):
    return [as_int(x) for x in v] if isinstance(v, list) else as_int(v)


def number_or_list(v):
    return list(v) if isinstance(v, list) else v


def evaluate(case):
    op = case["op"]
    p = case.get("params") or {}
    if op == "deform_roi_pool":
        raise Unsupported("torchvision has no DeformRoIPool (it is an mmcv op)")
    if op == "roi_align" and p.get("pool_mode", "avg") != "avg":
        raise Unsupported("torchvision.ops.roi_align has no pool_mode %r (avg only)" % p.get("pool_mode"))
    if op not in SUPPORTED:
        raise Unsupported("the torchvision peer has no op %r" % op)

    want_grad = case.get("grad_output") is not None
    x = {name: tensor_from_json(t, "inputs." + name) for name, t in case["inputs"].items()}
    if DTYPE != "float64":
        x = {n: t if n in INTEGER_INPUTS else t.to(TORCH_DTYPE) for n, t in x.items()}
    if DEVICE != "cpu":  # the level shapes stay on the CPU: the op reads them as sizes
        x = {n: t if n in INTEGER_INPUTS else t.to(DEVICE) for n, t in x.items()}
    wanted = (case.get("meta") or {}).get("grads", [])
    diff = [n for n in wanted if n in x] if want_grad else []
    for n in diff:
        x[n].requires_grad_(True)
    out = call_op(op, p, x)

    result = {"outputs": {"output": tensor_to_json(out)}, "grads": {}}
    if diff:
        go = tensor_from_json(case["grad_output"], "grad_output").to(device=out.device, dtype=out.dtype)
        grads = torch.autograd.grad(outputs=out, inputs=[x[n] for n in diff], grad_outputs=go,
                                    allow_unused=True)
        for n, g in zip(diff, grads):
            # An input the output does not depend on has gradient zero, not "absent".
            result["grads"][n] = tensor_to_json(torch.zeros_like(x[n]) if g is None else g)
    return result


def call_op(op, p, x):
    """The library call of one op on tensors `x` with parameters `p`."""
    if op == "deform_conv2d":
        out = torchvision.ops.deform_conv2d(
            x["input"], x["offset"], x["weight"], x.get("bias"),
            stride=int_or_pair(p.get("stride", [1, 1])),
            padding=int_or_pair(p.get("padding", [0, 0])),
            dilation=int_or_pair(p.get("dilation", [1, 1])),
            mask=x.get("mask"))
    elif op == "roi_pool":
        out = torchvision.ops.roi_pool(
            x["input"], x["rois"], int_or_pair(p["output_size"]), float(p.get("spatial_scale", 1.0)))
    elif op == "roi_align":
        out = torchvision.ops.roi_align(
            x["input"], x["rois"], int_or_pair(p["output_size"]), float(p.get("spatial_scale", 1.0)),
            as_int(p.get("sampling_ratio", -1)), bool(p.get("aligned", False)))
    elif op == "ps_roi_align":
        out = torchvision.ops.ps_roi_align(
            x["input"], x["rois"], int_or_pair(p["output_size"]), float(p.get("spatial_scale", 1.0)),
            as_int(p.get("sampling_ratio", -1)))
    elif op == "ps_roi_pool":
        out = torchvision.ops.ps_roi_pool(
            x["input"], x["rois"], int_or_pair(p["output_size"]), float(p.get("spatial_scale", 1.0)))
    elif op == "ms_deform_attn":
        out = msda_pytorch.ms_deform_attn(
            x["value"], x["spatial_shapes"], x["sampling_locations"], x["attention_weights"])
    elif op == "grid_sample":
        out = F.grid_sample(
            x["input"], x["grid"], mode=p.get("mode", "bilinear"),
            padding_mode=p.get("padding_mode", "zeros"), align_corners=bool(p.get("align_corners", False)))
    else:  # interpolate
        size = p.get("size")
        out = F.interpolate(
            x["input"],
            size=None if size is None else int_or_pair(size),
            scale_factor=number_or_list(p.get("scale_factor")),
            mode=p.get("mode", "nearest"),
            align_corners=p.get("align_corners"),
            recompute_scale_factor=p.get("recompute_scale_factor"),
            antialias=bool(p.get("antialias") or False))
    return out


BENCH_KEPT = {}  # the last bench request's inputs, kept for the next one that asks the same


def bench(req):
    """Times one op in float32 with `threads` threads: the median of `repeats` runs after
    `warmup` runs, forward or (with "backward") the backward alone. Large inputs arrive as
    {"shape", "low", "high"} and are drawn here (uniform, seeded) instead of sent as JSON.
    With "device": "cuda" the tensors live on the GPU and every run ends with a device
    synchronisation (kernels launch asynchronously), so the time is the kernels' own."""
    import time
    case = req["case"]
    op, p = case["op"], case.get("params") or {}
    if op == "deform_roi_pool" or (op == "roi_align" and p.get("pool_mode", "avg") != "avg"):
        raise Unsupported("torchvision has no %s%s" % (op, "" if op != "roi_align" else " max mode"))
    device = str(req.get("device", "cpu"))
    if device == "cuda" and not torch.cuda.is_available():
        raise Unsupported("torch %s has no CUDA device here" % torch.__version__)
    if device not in ("cpu", "cuda"):
        raise Unsupported("no bench device %r (cpu or cuda)" % device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    backward = bool(req.get("backward", False))
    torch.set_num_threads(int(req.get("threads", 1)))
    threads = torch.get_num_threads()
    # The harness alternates single timed runs of each side, one request each: the inputs (and
    # the forward a timed backward needs) are drawn once and kept while the requests ask for
    # the same thing. Drawing a large input took longer than the run it was drawn for.
    key = json.dumps({k: req.get(k) for k in ("case", "random_inputs", "device", "backward", "grads")}, sort_keys=True)
    if BENCH_KEPT.get("key") != key:
        BENCH_KEPT.clear()
        torch.manual_seed(0)
        x = {n: tensor_from_json(t, "inputs." + n).float().to(device) for n, t in case.get("inputs", {}).items()}
        for n, spec in req.get("random_inputs", {}).items():
            low, high = float(spec.get("low", -1.0)), float(spec.get("high", 1.0))
            x[n] = (torch.rand(spec["shape"], dtype=torch.float32) * (high - low) + low).to(device)
        diff = [n for n in req.get("grads", []) if n in x] if backward else []
        for n in diff:
            x[n].requires_grad_(True)
        out = go = None
        if backward:
            out = call_op(op, p, x)
            go = torch.rand_like(out)
        BENCH_KEPT.update(key=key, x=x, diff=diff, out=out, go=go)
    x, diff, out, go = BENCH_KEPT["x"], BENCH_KEPT["diff"], BENCH_KEPT["out"], BENCH_KEPT["go"]
    try:
        if backward:
            def run():
                torch.autograd.grad(out, [x[n] for n in diff], go, retain_graph=True, allow_unused=True)
        else:
            def run():
                with torch.no_grad():
                    call_op(op, p, x)
        times = []
        sync()
        for i in range(int(req.get("warmup", 1)) + int(req.get("repeats", 5))):
            t0 = time.perf_counter()
            run()
            sync()
            t1 = time.perf_counter()
            if i >= int(req.get("warmup", 1)):
                times.append((t1 - t0) * 1e3)
    finally:
        torch.set_num_threads(1)
    times.sort()
    return {"ms": times, "median_ms": times[len(times) // 2], "threads": threads, "device": device}


def answer(line):
    try:
        request = json.loads(line)
    except ValueError as e:
        return {"error": one_line("ValueError: request is not JSON: %s" % e), "kind": "failed"}
    if isinstance(request, dict) and "protocol" in request and "op" not in request:
        if IMPORT_ERROR is not None:
            return {"error": one_line(IMPORT_ERROR), "kind": "unavailable"}
        versions = {"torch": torch.__version__, "torchvision": torchvision.__version__,
                    "python": platform.python_version()}
        if DEVICE == "cuda":
            versions["cuda"] = str(torch.version.cuda)
            versions["gpu"] = torch.cuda.get_device_name(0)
        return {"protocol": 1, "name": "torchvision", "dtype": DTYPE,
                "description": "torch / torchvision in %s %s" % (
                    DTYPE, "on the CPU, one thread" if DEVICE == "cpu" else "on the GPU (CUDA)"),
                "ops": {op: {} for op in SUPPORTED},
                "versions": versions}
    if IMPORT_ERROR is not None:
        return {"error": one_line(IMPORT_ERROR), "kind": "unavailable"}
    try:
        if isinstance(request, dict) and "bench" in request:
            return bench(request["bench"])
        return evaluate(request)
    except Unsupported as e:
        return {"error": one_line(e), "kind": "unsupported"}
    except (RuntimeError, NotImplementedError) as e:
        # torch has no kernel of this op or mode in this dtype ("... not implemented for 'Half'"):
        # the case is declined, not failed.
        if "not implemented for" in str(e):
            return {"error": one_line("torch %s: %s" % (torch.__version__, e)), "kind": "unsupported"}
        return {"error": one_line("%s: %s" % (type(e).__name__, e)), "kind": "failed"}
    except Exception as e:  # noqa: BLE001 - every failure is reported, the bridge keeps running
        return {"error": one_line("%s: %s" % (type(e).__name__, e)), "kind": "failed"}


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        if not line.strip():
            continue
        reply = answer(line)
        try:
            text = json.dumps(reply, separators=(",", ":"), allow_nan=False)
        except ValueError as e:  # a non-finite float slipped past the conversion
            text = json.dumps({"error": one_line("ValueError: %s" % e), "kind": "failed"})
        stdout.write(text.encode("utf-8") + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main()
