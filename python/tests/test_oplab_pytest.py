"""Tests of python/oplab_pytest.py, the pytest front door: fuzz() passes a correct kernel, fails
a wrong one with its shrunk case and replay command, and says in one line why oplab could not
run (a backend whose interpreter lacks an import). Needs $OPLAB_BIN (the oplab program)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import oplab_pytest  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "python-exec")
needs_oplab = pytest.mark.skipif(not os.environ.get("OPLAB_BIN"), reason="needs OPLAB_BIN (the oplab program)")

# A roi_align that answers zeros: wrong on the first case with any non-zero input.
ZEROS = """
import numpy as np
import oplab_backend as ob

@ob.op("roi_align", grads=False)
def roi_align(params, inputs, grad_output):
    n = inputs["rois"].shape[0]
    c = inputs["input"].shape[1]
    ph, pw = params["output_size"]
    return np.zeros((n, c, ph, pw))

if __name__ == "__main__":
    ob.serve(name="zeros", dtype="float64")
"""


@needs_oplab
def test_a_correct_kernel_passes_and_its_summary_is_returned(tmp_path):
    summary = oplab_pytest.fuzz(os.path.join(EXAMPLES, "roi_align.py"), op="roi_align", cases=40, out=tmp_path)
    assert summary["cases"]["total"] == 40
    assert summary["failures"] == []


@needs_oplab
def test_a_wrong_kernel_fails_with_its_shrunk_case_and_replay(tmp_path):
    kernel = tmp_path / "zeros_kernel.py"
    kernel.write_text(ZEROS)
    with pytest.raises(oplab_pytest.FuzzFailure) as caught:
        oplab_pytest.fuzz(str(kernel), op="roi_align", cases=20, out=tmp_path / "out", shrink_time=10)
    failure = caught.value
    message = str(failure)
    assert isinstance(failure, AssertionError)  # pytest reports it as the test's failure
    assert "oplab fuzz found" in message and "py-zeros_kernel" in message
    assert "shrunk case: {" in message
    assert "replay: oplab replay" in message and "--exec" in message
    assert failure.failures[0]["minimal_case"]["op"] == "roi_align"


@needs_oplab
def test_a_backend_that_cannot_start_names_the_failed_import(tmp_path):
    kernel = tmp_path / "needs_missing.py"
    kernel.write_text("import oplab_no_such_module\n")
    with pytest.raises(oplab_pytest.OplabError) as caught:
        oplab_pytest.fuzz(str(kernel), op="roi_align", cases=1, out=tmp_path / "out")
    assert caught.value.exit_code == 4
    assert "No module named 'oplab_no_such_module'" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_no_oplab_anywhere_is_one_clear_error(monkeypatch):
    monkeypatch.delenv("OPLAB_BIN", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(oplab_pytest, "HERE", "/nonexistent/share/oplab/python")
    with pytest.raises(oplab_pytest.OplabError, match="oplab executable not found"):
        oplab_pytest.find_oplab()


def test_a_relative_kernel_is_found_beside_the_calling_test(tmp_path):
    with pytest.raises(oplab_pytest.OplabError, match="kernel script not found: " + HERE):
        oplab_pytest.fuzz("no_such_kernel.py", op="roi_align", oplab=sys.executable)
