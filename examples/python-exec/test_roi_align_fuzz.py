"""The pytest front door (python/oplab_pytest.py) on this folder's kernel: one call fuzzes the
numpy roi_align against oplab's double reference and fails the test with the shrunk case and
its replay command when oplab finds one.

    OPLAB_BIN=build/cli/oplab python3 -m pytest examples/python-exec
    OPLAB_BIN=build/cli/oplab OPLAB_EXAMPLE_KERNEL=roi_align_buggy.py python3 -m pytest examples/python-exec

The first passes; the second fails, printing the edge bug's shrunk case (a 1x1 image, one roi
starting half a pixel above it).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import oplab_pytest  # noqa: E402

KERNEL = os.environ.get("OPLAB_EXAMPLE_KERNEL", "roi_align.py")


def test_roi_align_survives_the_fuzzer(tmp_path):
    oplab_pytest.fuzz(KERNEL, op="roi_align", cases=300, out=tmp_path)
