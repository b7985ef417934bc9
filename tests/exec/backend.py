#!/usr/bin/python3
"""A line-protocol backend for tests/test_exec_backend.cpp, misbehaving on request.

It answers each case with what `oplab eval --backend ref` answers (the binary is $OPLAB_BIN),
then, per MODE, spoils it: the well-formed answers are the reference's own, so only the
spoiling is judged. Usage: backend.py MODE [DTYPE] [GRADS]
  ok           the reference's answer
  f16out       the output rounded through float16 (a float16 kernel)
  another_op   answers for another op
  wrong_shape  drops the output's last element and dimension
  wrong_grads  leaves out one gradient
  nan          an output of NaN
  stray        prints a line of chatter before the answer
  hang         never answers a case
  huge         answers a line that never ends (gigabytes, as fast as the pipe takes them)
  die          exits with status 7 on a case
  bad_hello    answers hello with protocol 2
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

mode = sys.argv[1]
dtype = sys.argv[2] if len(sys.argv) > 2 else "float64"
grads = (sys.argv[3] if len(sys.argv) > 3 else "true") == "true"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def reference(case):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(case, f)
    try:
        out = subprocess.run([os.environ["OPLAB_BIN"], "eval", f.name, "--backend", "ref"],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        return {"error": out.stderr.strip(), "kind": "failed"}
    return json.loads(out.stdout)


def f16(v):
    if isinstance(v, str):
        return v
    try:
        return struct.unpack("e", struct.pack("e", v))[0]
    except OverflowError:
        return "inf" if v > 0 else "-inf"


for line in sys.stdin:
    msg = json.loads(line)
    if "protocol" in msg and "op" not in msg:
        proto = 2 if mode == "bad_hello" else 1
        send({"protocol": proto, "name": "test-" + mode, "dtype": dtype,
              "ops": {"roi_align": {"grads": grads}, "interpolate": {}}})
        continue
    print("case received", file=sys.stderr, flush=True)
    if not grads and "grad_output" in msg:
        send({"error": "sent grad_output although the hello said grads: false", "kind": "failed"})
        continue
    if mode == "hang":
        time.sleep(3600)
    if mode == "die":
        sys.exit(7)
    if mode == "huge":
        chunk = "9" * (1 << 20)
        try:
            while True:
                sys.stdout.write(chunk)
        except BrokenPipeError:
            sys.exit(0)
    r = reference(msg)
    if "error" not in r:
        out = r["outputs"]["output"]
        if mode == "f16out":
            out["data"] = [f16(v) for v in out["data"]]
        elif mode == "another_op":
            r["op"] = "interpolate" if msg["op"] != "interpolate" else "roi_align"
        elif mode == "wrong_shape":
            out["shape"] = out["shape"][:-1] + [out["shape"][-1] - 1] if out["shape"][-1] > 1 else out["shape"] + [2]
            n = 1
            for d in out["shape"]:
                n *= d
            out["data"] = [0.0] * n
        elif mode == "wrong_grads" and r.get("grads"):
            r["grads"].pop(sorted(r["grads"])[0])
        elif mode == "nan":
            out["data"] = ["nan"] * len(out["data"])
        elif mode == "stray":
            print("computing roi_align...")
    send(r)
