"""Peer bridge: evaluates oplab interpolate cases with Pillow's Image.resize, one JSON line in,
one out (the line protocol of external backends, docs/protocol.md, protocol 1).

Started by peer/pillow_backend.cpp as `python3 -u <this file> --mode F` (float32 images) or
`--mode L` (8-bit images) and kept alive. Each [H, W] plane of the case's input becomes one Pillow image, is resized to the
case's output size, and comes back; Pillow takes sizes only, so its scale is always in / out.
The mapping (SPEC §16): bilinear -> BILINEAR, bicubic -> BICUBIC (both antialiased filters in
Pillow, whatever the case's antialias says), nearest-exact -> NEAREST, area -> BOX. The C++
side declines what has no mapping before the bridge sees it and names every difference.

With `--bench` it times Image.resize instead (bench(); `oplab bench` starts it so).

Kept deliberately thin: the peer is the oracle, so this file only translates JSON to the
library call and back and never reimplements or patches an op.
"""
import json
import math
import platform
import sys
import warnings

warnings.simplefilter("ignore")  # stderr belongs to the calling program

# `--bench`: each line is a timing request (bench()), not a case.
BENCH_MODE = "--bench" in sys.argv[1:]
MODE = "F"
if "--mode" in sys.argv[1:-1]:
    MODE = sys.argv[sys.argv.index("--mode") + 1]

try:
    import numpy as np
    import PIL
    from PIL import Image

    IMPORT_ERROR = None
    if MODE not in ("F", "L"):
        IMPORT_ERROR = "the bridge has no image mode %r (F, L)" % MODE
except Exception as e:  # noqa: BLE001 - any import failure makes the peer unavailable
    IMPORT_ERROR = "%s: %s" % (type(e).__name__, e)


class Unsupported(Exception):
    pass


def one_line(e):
    return " ".join(str(e).split())[:500] or type(e).__name__


NONFINITE_IN = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def plane_stack(t):
    shape = [int(d) for d in t["shape"]]
    data = [NONFINITE_IN[v] if isinstance(v, str) else float(v) for v in t["data"]]
    return np.asarray(data, dtype=np.float64).reshape(shape)


def value_out(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def resample_filter(p):
    mode = p.get("mode", "nearest")
    R = getattr(Image, "Resampling", Image)  # Pillow >= 9.1 names them Image.Resampling.*
    table = {"bilinear": R.BILINEAR, "bicubic": R.BICUBIC, "nearest-exact": R.NEAREST, "area": R.BOX}
    if mode not in table:
        raise Unsupported("Pillow has no resample filter for mode %r" % mode)
    return table[mode]


def image(plane):
    """One [H, W] plane as a Pillow image: mode F holds float32 pixels (the harness sent values
    of that type), mode L 8-bit ones (the harness sent integers in 0..255)."""
    if MODE == "L":
        return Image.fromarray(np.ascontiguousarray(np.clip(np.rint(plane), 0, 255), dtype=np.uint8), mode="L")
    return Image.fromarray(np.ascontiguousarray(plane, dtype=np.float32), mode="F")


def evaluate(case):
    if case.get("op") != "interpolate":
        raise Unsupported("the pillow peer has only interpolate (Image.resize), not %s" % case.get("op"))
    p = case.get("params") or {}
    x = plane_stack(case["inputs"]["input"])
    if x.ndim != 4:
        raise Unsupported("Pillow resizes 2-D images only")
    out_h, out_w = output_size(p, x.shape[2:])
    resample = resample_filter(p)
    n, c = x.shape[:2]
    out = np.zeros((n, c, out_h, out_w), dtype=np.float64)
    for i in range(n):
        for j in range(c):
            im = image(x[i, j])
            out[i, j] = np.asarray(im.resize((out_w, out_h), resample=resample), dtype=np.float64)
    return {"outputs": {"output": {"shape": list(out.shape), "data": [value_out(v) for v in out.ravel()]}},
            "grads": {}}


def output_size(p, spatial):
    """SPEC §6: size, or floor(in * sf) in double."""
    if p.get("size") is not None:
        s = p["size"]
        return [int(v) for v in s] if isinstance(s, list) else [int(s)] * 2
    sf = p["scale_factor"]
    sf = sf if isinstance(sf, list) else [sf, sf]
    return [int(math.floor(spatial[k] * float(sf[k]))) for k in range(2)]


BENCH_KEPT = {}  # the planes and resize call of the last bench request that carried a case


def bench(req):
    """Times Image.resize on every plane of a case: the planes become images once (kept while
    requests without a case follow), then `warmup` untimed and `repeats` timed runs. With
    `threads` > 1 the planes are split among that many threads (Pillow releases the GIL while
    it resamples), as a data loader's workers would share them."""
    import time
    from concurrent.futures import ThreadPoolExecutor
    if "case" in req:
        case = req["case"]
        p = case.get("params") or {}
        x = plane_stack(case["inputs"]["input"])
        out_h, out_w = output_size(p, x.shape[2:])
        images = [image(x[i, j]) for i in range(x.shape[0]) for j in range(x.shape[1])]
        threads = max(1, int(req.get("threads", 1)))
        pool = ThreadPoolExecutor(threads) if threads > 1 else None
        BENCH_KEPT.clear()
        BENCH_KEPT.update(images=images, size=(out_w, out_h), resample=resample_filter(p), pool=pool)
    if not BENCH_KEPT:
        return {"error": "no bench images: the first request carries a case", "kind": "failed"}
    images, size, resample, pool = BENCH_KEPT["images"], BENCH_KEPT["size"], BENCH_KEPT["resample"], BENCH_KEPT["pool"]

    def one(im):
        return im.resize(size, resample=resample)

    def run():
        if pool is None:
            for im in images:
                one(im)
        else:
            list(pool.map(one, images))

    times = []
    for i in range(int(req.get("warmup", 0)) + int(req.get("repeats", 1))):
        t0 = time.perf_counter()
        run()
        if i >= int(req.get("warmup", 0)):
            times.append((time.perf_counter() - t0) * 1e3)
    return {"ms": times}


def answer(line):
    try:
        request = json.loads(line)
    except ValueError as e:
        return {"error": one_line("ValueError: request is not JSON: %s" % e), "kind": "failed"}
    if isinstance(request, dict) and "protocol" in request and "op" not in request:
        if IMPORT_ERROR is not None:
            return {"error": one_line(IMPORT_ERROR), "kind": "unavailable"}
        return {"protocol": 1, "name": "pillow", "dtype": "float32" if MODE == "F" else "uint8",
                "description": "Pillow %s Image.resize on mode %s images" % (PIL.__version__, MODE),
                "ops": {"interpolate": {"grads": False}},
                "versions": {"pillow": PIL.__version__, "numpy": np.__version__,
                             "python": platform.python_version()}}
    if IMPORT_ERROR is not None:
        return {"error": one_line(IMPORT_ERROR), "kind": "unavailable"}
    try:
        if BENCH_MODE:
            return bench(request)
        return evaluate(request)
    except Unsupported as e:
        return {"error": one_line(e), "kind": "unsupported"}
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
        except ValueError as e:
            text = json.dumps({"error": one_line("ValueError: %s" % e), "kind": "failed"})
        stdout.write(text.encode("utf-8") + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main()
