#!/usr/bin/env python3
"""roi_align.py with a deliberate edge bug, for `oplab fuzz` to catch: a sample within one pixel
above or left of the image (-1 <= y < 0) is read as outside (0) instead of as the edge row.
The rest is the correct float32 kernel (it declares float32 too)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roi_align  # noqa: E402

roi_align.EDGE_BUG = True
roi_align.serve("numpy-roi-align-buggy", "roi_align avg in numpy, float32, with the [-1, 0) edge read as outside")
