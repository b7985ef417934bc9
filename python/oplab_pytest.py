"""Fuzz your Python kernels with oplab from your own pytest suite (the twin of CMake's
oplab_add_fuzz_test). Standard library only; pytest is needed for the fixture alone.

    # test_my_kernels.py
    import oplab_pytest

    def test_roi_align_survives_the_fuzzer(tmp_path):
        oplab_pytest.fuzz("my_backend.py", op="roi_align", cases=300, out=tmp_path)

`my_backend.py` is a backend written with oplab_backend (decorated functions and serve(), see
oplab_backend.py); a relative path is found beside the test file that calls fuzz(). fuzz() runs
`oplab fuzz` on it against oplab's double reference, at the dtype the backend declares, and
returns the campaign's summary. When oplab finds a failing case the test fails (FuzzFailure, an
AssertionError) with each failure's detail, its case shrunk to the smallest that still fails,
and the command that replays it. When oplab cannot run the campaign (the backend does not start,
a name is wrong) it raises OplabError with oplab's one-line reason and exit code.

As a fixture, writing into the test's tmp_path: enable the plugin with
`pytest_plugins = ["oplab_pytest"]` in conftest.py (or `pytest -p oplab_pytest`), then

    def test_roi_align(oplab_fuzz):
        oplab_fuzz("my_backend.py", op="roi_align", time=30)

The oplab executable: the `oplab=` argument, else $OPLAB_BIN, else `oplab` on PATH, else the
one installed beside this file (PREFIX/share/oplab/python -> PREFIX/bin/oplab).
"""
import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


class OplabError(RuntimeError):
    """oplab could not run the campaign: exit code 2 (usage, unknown name), 4 (the backend
    cannot run here), 70 (internal), ... with its one-line message."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


class FuzzFailure(AssertionError):
    """oplab found failing cases: `failures` holds each one's record (op, property, detail, the
    shrunk case under "minimal_case", the replay command under "replay")."""

    def __init__(self, message, summary, failures):
        super().__init__(message)
        self.summary = summary
        self.failures = failures


def find_oplab(oplab=None):
    """The oplab executable to run (see the module's doc), or OplabError naming where it looked."""
    candidates = [oplab, os.environ.get("OPLAB_BIN"), shutil.which("oplab"),
                  os.path.normpath(os.path.join(HERE, "..", "..", "..", "bin", "oplab"))]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise OplabError("oplab executable not found: pass oplab=PATH, set OPLAB_BIN, or put oplab on PATH", 2)


def _caller_dir():
    """The directory of the first caller outside this module: where a relative kernel lies."""
    for frame in inspect.stack()[1:]:
        if os.path.abspath(frame.filename) != os.path.abspath(__file__):
            return os.path.dirname(os.path.abspath(frame.filename))
    return os.getcwd()


def _backend_name(kernel):
    stem = os.path.splitext(os.path.basename(kernel))[0]
    return "py-" + (re.sub(r"[^A-Za-z0-9_.-]", "-", stem) or "kernel")


def _failure_message(name, op, failures, out):
    lines = ["oplab fuzz found %d failing case%s of %s on %s (records in %s):"
             % (len(failures), "" if len(failures) == 1 else "s", name, op, out)]
    for f in failures:
        lines.append("  %s: %s" % (f.get("property", "?"), f.get("detail", "")))
        lines.append("    %s case: %s" % ("shrunk" if f.get("shrunk") else "failing (not shrunk)",
                                          json.dumps(f.get("minimal_case"), separators=(",", ":"))))
        lines.append("    replay: %s" % f.get("replay", ""))
    return "\n".join(lines)


def fuzz(kernel, op, cases=None, time=None, seed=None, properties=("differential",), name=None,
         python=None, out=None, shrink_time=30, oplab=None, extra_args=()):
    """Fuzzes the oplab_backend script `kernel` on op `op` with `cases` cases or for `time`
    seconds (one of them; default 200 cases), against the double reference. Returns the summary
    (a dict, summary.json) when nothing failed; raises FuzzFailure when something did,
    OplabError when oplab could not run.

    properties: the fuzz properties to check (oplab fuzz --help); name: the backend's name in
    records (default "py-" + the script's stem); python: the interpreter that runs the script
    (default this one); out: the campaign's folder (default a temporary one, kept when it
    fails); extra_args: more `oplab fuzz` arguments."""
    if cases is not None and time is not None:
        raise ValueError("give cases or time, not both")
    if cases is None and time is None:
        cases = 200
    exe = find_oplab(oplab)
    path = kernel if os.path.isabs(kernel) else os.path.join(_caller_dir(), kernel)
    if not os.path.isfile(path):
        raise OplabError("kernel script not found: %s" % path, 2)
    name = name or _backend_name(path)
    command = "%s %s" % (shlex.quote(python or sys.executable), shlex.quote(path))
    out = str(out) if out is not None else tempfile.mkdtemp(prefix="oplab-pytest-")
    run_dir = os.path.join(out, name + "-" + op)
    args = [exe, "fuzz", "--exec", "%s=%s" % (name, command), "--backend", name, "--op", op,
            "--shrink-time", str(shrink_time), "--out", run_dir]
    args += ["--cases", str(cases)] if cases is not None else ["--time", str(time)]
    if seed is not None:
        args += ["--seed", str(seed)]
    for p in properties:
        args += ["--property", p]
    args += list(extra_args)
    # The script imports oplab_backend, which lies beside this module.
    env = dict(os.environ)
    env["PYTHONPATH"] = HERE + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        lines = [l for l in (done.stderr.strip() or done.stdout.strip()).splitlines() if l.strip()]
        raise OplabError("oplab fuzz could not run (exit %d): %s" % (done.returncode, lines[-1] if lines else "no message"),
                         done.returncode)
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    if done.returncode == 0:
        return summary
    failures = []
    for f in summary.get("failures", []):
        record = dict(f)
        try:
            with open(f["record"]) as r:
                record.update(json.load(r))
            with open(f["case"]) as c:
                record["minimal_case"] = json.load(c)
        except (KeyError, OSError, ValueError):
            pass
        failures.append(record)
    if not failures:  # exit 1 without a failing case: a record over its flip budget
        raise FuzzFailure("oplab fuzz reported findings on %s: %s" % (op, json.dumps(summary.get("findings"))),
                          summary, [])
    raise FuzzFailure(_failure_message(name, op, failures, run_dir), summary, failures)


try:
    import pytest
except ImportError:  # the helper works without pytest; only the fixture needs it
    pytest = None

if pytest is not None:
    @pytest.fixture
    def oplab_fuzz(tmp_path):
        """fuzz(), its campaign written under the test's tmp_path."""
        def run(kernel, op, **kwargs):
            kwargs.setdefault("out", tmp_path)
            return fuzz(kernel, op, **kwargs)
        return run
