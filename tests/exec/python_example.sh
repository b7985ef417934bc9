#!/bin/sh
# The Python example over the line protocol (examples/python-exec): the correct roi_align passes
# a differential fuzz run, and the copy with an edge bug is caught and shrunk to a small case.
# Usage: python_example.sh OPLAB PYTHON SOURCE_DIR SCRATCH
set -u
oplab=$1 python=$2 src=$3 out=$4
rm -rf "$out" && mkdir -p "$out"
"$oplab" fuzz --exec "np=$python $src/examples/python-exec/roi_align.py" --backend np --op roi_align \
  --property differential --cases 300 --out "$out/ok" >"$out/ok.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "the correct roi_align failed (exit $rc):"; tail -20 "$out/ok.log"; exit 1; fi
"$oplab" fuzz --exec "bug=$python $src/examples/python-exec/roi_align_buggy.py" --backend bug --op roi_align \
  --property differential --time 60 --shrink-time 30 --out "$out/bug" >"$out/bug.log" 2>&1
rc=$?
if [ $rc -ne 1 ]; then echo "the buggy roi_align was not caught (exit $rc):"; tail -20 "$out/bug.log"; exit 1; fi
grep -q '"shrunk": *true' "$out"/bug/failures/*.json || grep -q '"shrunk":true' "$out"/bug/failures/*.json || {
  echo "the failure was not shrunk"; exit 1; }
echo "correct example passes; buggy example caught:"
grep -h "vs ref" "$out/bug.log" | head -1
