#!/bin/sh
# The pytest front door (python/oplab_pytest.py) as a kernel author meets it: `pytest` on
# examples/python-exec passes with the correct roi_align, and fails on its buggy copy with the
# shrunk case and the command that replays it.
# Usage: pytest_front_door.sh PYTHON SOURCE_DIR SCRATCH   (OPLAB_BIN in the environment)
set -u
python=$1 src=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
cd "$src" || exit 1
"$python" -m pytest -q -p no:cacheprovider --basetemp="$out/clean" examples/python-exec >"$out/clean.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "pytest on the correct example failed (exit $rc):"; tail -30 "$out/clean.log"; exit 1; fi
OPLAB_EXAMPLE_KERNEL=roi_align_buggy.py "$python" -m pytest -q -p no:cacheprovider --basetemp="$out/buggy" \
  examples/python-exec >"$out/buggy.log" 2>&1
rc=$?
if [ $rc -ne 1 ]; then echo "pytest on the buggy example did not fail as a test failure (exit $rc):"; tail -30 "$out/buggy.log"; exit 1; fi
for want in "FuzzFailure" "oplab fuzz found" "shrunk case: {" "replay: oplab replay" "--exec"; do
  grep -q -- "$want" "$out/buggy.log" || { echo "the failure does not show \"$want\":"; tail -40 "$out/buggy.log"; exit 1; }
done
echo "pytest passes on the correct example and fails on the buggy one with:"
grep -h -A2 "oplab fuzz found" "$out/buggy.log" | head -4
