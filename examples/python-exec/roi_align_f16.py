#!/usr/bin/env python3
"""roi_align.py in float16 storage, as production half kernels are written: the inputs arrive
as float16 and the output is stored as float16, while the geometry (roi start, bin size,
sample coordinates, weights) is formed and the samples are accumulated in float32. It declares
dtype float16, so oplab rounds its inputs to float16 and holds its output to the float16 bound
(accumulation assumed in float32). The code is roi_align.py's, with its storage type set."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roi_align  # noqa: E402

roi_align.STORAGE = np.float16  # COMPUTE stays float32
roi_align.serve("numpy-roi-align-f16", "roi_align avg in numpy, float16 storage, float32 arithmetic (examples/python-exec)")
