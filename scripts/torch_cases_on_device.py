"""Runs oplab cases through torch's kernels on a device and records what they answer.

    python3 scripts/torch_cases_on_device.py --dtype float16 --device cuda CASE.json ...

One JSON line per case on stdout: {"case": path, "result": {"outputs": .., "grads": ..}} as the
peer bridge (peer/torchvision_bridge.py, beside this script or in ../peer) answers it, with a
gradient for every differentiable input. Used to keep the answers of kernels that run only on
a GPU machine, so that the judge's tests can hold those answers here (tests/data/). For linear
ops (interpolate) the line also carries the adjoint identity on the device and on the CPU:
<grad_output, F(x)> against <grad F^T(grad_output), x>, which a backward that is the forward's
adjoint satisfies to rounding.
"""
import argparse
import json
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="float32")
parser.add_argument("--device", default="cuda")
parser.add_argument("cases", nargs="+")
args = parser.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
for d in (here, os.path.join(here, "..", "peer")):
    if os.path.exists(os.path.join(d, "torchvision_bridge.py")):
        sys.path.insert(0, d)
        break
sys.argv = ["bridge", "--dtype", args.dtype, "--device", args.device]
import torch  # noqa: E402
import torchvision_bridge as bridge  # noqa: E402

NOT_DIFFERENTIABLE = ("rois", "spatial_shapes", "level_start_index")


def adjoint(case, device):
    """<go, F(x)> and <F^T go, x> in float64 sums of float32 results on `device`."""
    x = bridge.tensor_from_json(case["inputs"]["input"], "input").to(torch.float32).to(device).requires_grad_(True)
    y = bridge.call_op("interpolate", case.get("params") or {}, {"input": x})
    go = bridge.tensor_from_json(case["grad_output"], "grad_output").to(torch.float32).to(device)
    (g,) = torch.autograd.grad(y, x, go)
    return float((go.double() * y.detach().double()).sum()), float((g.double() * x.detach().double()).sum())


for path in args.cases:
    case = json.load(open(path))
    case.setdefault("meta", {})["grads"] = [n for n in case["inputs"] if n not in NOT_DIFFERENTIABLE]
    line = {"case": os.path.basename(path), "dtype": args.dtype, "device": args.device}
    try:
        line["result"] = bridge.evaluate(case)
    except Exception as e:  # noqa: BLE001 - recorded, the next case runs
        line["error"] = "%s: %s" % (type(e).__name__, e)
    if case["op"] == "interpolate" and case.get("grad_output") is not None:
        line["adjoint"] = {dev: adjoint(case, dev) for dev in (args.device, "cpu")}
    print(json.dumps(line), flush=True)
