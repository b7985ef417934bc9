"""Write an oplab backend in Python: one decorated function per op, served over oplab's line
protocol (protocol 1, docs/protocol.md). Standard library only.

    import oplab_backend as ob

    @ob.op("roi_align", grads=False)          # forward only; dtype defaults to serve()'s
    def roi_align(params, inputs, grad_output):
        x = inputs["input"].numpy()           # Tensor: .shape, .data (flat, row-major), .numpy()
        ...
        return out                            # a Tensor, a numpy array, or (output, {name: grad})

    ob.serve(name="my-roi-align", dtype="float64")

Run it with `oplab fuzz --exec mine='python3 my_backend.py' --backend mine --op roi_align ...`.
Raise ob.Unsupported("...") for a case the kernel does not handle (a mode it lacks); any other
exception is reported as a failure of that case, in one line. While a function runs, print()
goes to stderr (oplab keeps it in a log), so it can never corrupt the protocol on stdout.
"""
import json
import math
import sys
import traceback

PROTOCOL = 1
DTYPES = ("float64", "float32", "float16", "bfloat16")

_ops = {}


class Unsupported(Exception):
    """The case is valid but this backend does not handle it (answered as kind "unsupported")."""


class Invalid(Exception):
    """The backend refuses the case as invalid (kind "invalid": oplab counts it as a failure)."""


class Tensor:
    """A dense row-major tensor: shape (tuple of ints) and data (a flat list of floats)."""

    def __init__(self, shape, data):
        self.shape = tuple(int(d) for d in shape)
        self.data = data

    def numpy(self):
        import numpy as np
        return np.asarray(self.data, dtype=np.float64).reshape(self.shape)

    def __repr__(self):
        return "Tensor(shape=%r)" % (self.shape,)


def op(name, dtype=None, grads=True):
    """Registers the decorated function as the backend's implementation of op `name`.

    dtype: the type the function computes in (default: serve()'s); grads: whether it returns
    gradients when the case has grad_output (False: oplab sends no grad_output and judges the
    forward alone). The function gets (params, inputs, grad_output) and returns the output, or
    (output, {input_name: gradient}) when grad_output is not None.
    """
    if dtype is not None and dtype not in DTYPES:
        raise ValueError("dtype must be one of " + ", ".join(DTYPES))

    def register(fn):
        _ops[name] = {"fn": fn, "dtype": dtype, "grads": bool(grads)}
        return fn
    return register


def _number(v):
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return float(v)


def _tensor_in(j):
    return Tensor(j["shape"], [_number(v) for v in j["data"]])


def _value_out(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _tensor_out(t):
    if isinstance(t, Tensor):
        shape, flat = t.shape, t.data
    elif hasattr(t, "shape") and hasattr(t, "ravel"):  # a numpy array
        shape, flat = t.shape, t.ravel().tolist()
    else:
        shape, flat = t  # (shape, flat data)
    return {"shape": [int(d) for d in shape], "data": [_value_out(v) for v in flat]}


def _hello(name, description, dtype, accumulation=None):
    ops = {}
    for op_name, entry in _ops.items():
        decl = {}
        if entry["dtype"] and entry["dtype"] != dtype:
            decl["dtype"] = entry["dtype"]
        if not entry["grads"]:
            decl["grads"] = False
        ops[op_name] = decl
    hello = {"protocol": PROTOCOL, "name": name, "description": description, "dtype": dtype, "ops": ops}
    if accumulation:
        hello["accumulation"] = accumulation
    return hello


def _one_line(e):
    text = "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__
    return " ".join(text.split())[:300]


def _answer(case):
    entry = _ops.get(case.get("op"))
    if entry is None:
        return {"error": "no implementation of op %s" % case.get("op"), "kind": "unsupported"}
    inputs = {k: _tensor_in(v) for k, v in case.get("inputs", {}).items()}
    gout = _tensor_in(case["grad_output"]) if case.get("grad_output") is not None else None
    try:
        result = entry["fn"](case.get("params", {}), inputs, gout)
    except Unsupported as e:
        return {"error": _one_line(e), "kind": "unsupported"}
    except Invalid as e:
        return {"error": _one_line(e), "kind": "invalid"}
    except Exception as e:  # a bug in the kernel: one line back, the traceback in the log
        traceback.print_exc(file=sys.stderr)
        return {"error": _one_line(e), "kind": "failed"}
    grads = {}
    if isinstance(result, tuple):
        result, grads = result
    return {"op": case["op"], "outputs": {"output": _tensor_out(result)},
            "grads": {k: _tensor_out(v) for k, v in (grads or {}).items()}}


def serve(name, dtype="float64", description="", stdin=None, stdout=None, accumulation=None):
    """Answers oplab until stdin closes: hello first, then one answer line per case line.

    accumulation: the type the kernels add their terms in, when it is not the default (float32
    for float16 and bfloat16 kernels, the dtype itself otherwise): a half kernel that sums in
    half says "float16", and its bound widens accordingly (docs/protocol.md)."""
    if dtype not in DTYPES:
        raise ValueError("dtype must be one of " + ", ".join(DTYPES))
    if accumulation is not None and accumulation not in DTYPES:
        raise ValueError("accumulation must be one of " + ", ".join(DTYPES))
    if not _ops:
        raise RuntimeError("no op registered: decorate a function with @oplab_backend.op(NAME)")
    inp = stdin or sys.stdin
    out = stdout or sys.stdout
    # The protocol owns stdout: anything the kernels print goes to stderr instead.
    sys.stdout = sys.stderr
    for line in inp:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "protocol" in msg and "op" not in msg:
            reply = _hello(name, description, dtype, accumulation)
        else:
            reply = _answer(msg)
        out.write(json.dumps(reply, allow_nan=False) + "\n")
        out.flush()
