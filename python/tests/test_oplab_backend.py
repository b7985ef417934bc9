"""Tests of python/oplab_backend.py: the protocol it speaks (in-process, through serve() on
string streams) and a short campaign of oplab on a decorated function (needs $OPLAB_BIN)."""
import io
import json
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import oplab_backend as ob  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(HERE))


def converse(lines):
    out = io.StringIO()
    ob.serve(name="t", dtype="float32", stdin=io.StringIO("".join(json.dumps(x) + "\n" for x in lines)), stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    monkeypatch.setattr(ob, "_ops", {})
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # serve() redirects it; put it back after


def case(op="interpolate", data=(1.0, "nan", "inf", -2.5), grad=False):
    c = {"op": op, "params": {}, "inputs": {"input": {"shape": [1, 1, len(data)], "data": list(data)}}}
    if grad:
        c["grad_output"] = {"shape": [1, 1, len(data)], "data": [1.0] * len(data)}
    return c


def test_hello_declares_ops_with_their_dtype_and_grads():
    ob.op("roi_align", grads=False)(lambda p, i, g: None)
    ob.op("interpolate", dtype="float64")(lambda p, i, g: None)
    [hello] = converse([{"oplab": "0.1.0", "protocol": 1}])
    assert hello == {"protocol": 1, "name": "t", "description": "", "dtype": "float32",
                     "ops": {"roi_align": {"grads": False}, "interpolate": {"dtype": "float64"}}}


def test_values_round_trip_with_nan_and_inf_spelled_as_strings():
    @ob.op("interpolate")
    def identity(params, inputs, grad_output):
        x = inputs["input"]
        assert x.data[1] != x.data[1] and x.data[2] == float("inf")
        return x
    [answer] = converse([case()])
    assert answer["outputs"]["output"] == {"shape": [1, 1, 4], "data": [1.0, "nan", "inf", -2.5]}
    assert answer["grads"] == {}


def test_gradients_are_returned_with_the_output():
    @ob.op("interpolate")
    def f(params, inputs, grad_output):
        return inputs["input"], {"input": grad_output}
    [answer] = converse([case(data=(1.0, 2.0), grad=True)])
    assert answer["grads"]["input"] == {"shape": [1, 1, 2], "data": [1.0, 1.0]}


def test_errors_are_one_line_of_the_right_kind_and_print_goes_to_stderr(capsys):
    @ob.op("interpolate")
    def f(params, inputs, grad_output):
        print("chatter that must not reach the protocol")
        if params.get("mode") == "bicubic":
            raise ob.Unsupported("no bicubic")
        raise ZeroDivisionError("division by zero\nsecond line")
    cubic = case()
    cubic["params"] = {"mode": "bicubic"}
    unsupported, failed, unknown = converse([cubic, case(), case(op="roi_pool")])
    assert unsupported == {"error": "Unsupported: no bicubic", "kind": "unsupported"}
    assert failed == {"error": "ZeroDivisionError: division by zero second line", "kind": "failed"}
    assert unknown["kind"] == "unsupported"
    assert "chatter" in capsys.readouterr().err


@pytest.mark.skipif(not os.environ.get("OPLAB_BIN"), reason="needs OPLAB_BIN (the oplab program)")
def test_a_short_campaign_on_a_decorated_function():
    script = """
import sys
sys.path.insert(0, {python!r})
sys.path.insert(0, {examples!r})
import oplab_backend as ob
import roi_align as numpy_kernel

@ob.op("roi_align", grads=False)
def roi_align(params, inputs, grad_output):
    return numpy_kernel.roi_align(params, inputs, grad_output)

# The example kernel computes in float32 (its boxes, samples and sums), so it says so.
ob.serve(name="decorated", dtype="float32")
""".format(python=os.path.join(SOURCE, "python"), examples=os.path.join(SOURCE, "examples", "python-exec"))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "backend.py")
        with open(path, "w") as f:
            f.write(script)
        out = os.path.join(tmp, "out")
        run = subprocess.run([os.environ["OPLAB_BIN"], "campaign", "--exec", "mine=%s %s" % (sys.executable, path),
                              "--backend", "mine", "--op", "roi_align", "--cases", "40", "--out", out],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        summary = json.load(open(os.path.join(out, "summary.json")))
        # oplab campaign holds the backend to two properties: against ref, and the same answer twice.
        record, again = sorted(summary["records"], key=lambda r: r["property"] != "differential")
        assert (record["property"], again["property"]) == ("differential", "determinism"), summary["records"]
        assert set(again["verdicts"]) <= {"agree", "unsupported"}, again
        assert record["backend"] == "mine" and record["dtype"] == "float32"
        # Every case agrees (or is a float32 boundary flip), but those of pool_mode max, which the
        # kernel declines.
        v = record["verdicts"]
        assert v.get("agree", 0) >= 20, record
        assert v.get("agree", 0) + v.get("boundary-flip", 0) + v.get("unsupported", 0) == 40, record
        assert record["forward_only"] > 0, record
