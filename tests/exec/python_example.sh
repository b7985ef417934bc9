#!/bin/sh
# The Python example over the line protocol (examples/python-exec): the correct roi_align, in
# float32 and in float16 storage, passes a differential fuzz run at the dtype it declares, and
# the float32 copy with an edge bug is caught and shrunk to a small case.
# Usage: python_example.sh OPLAB PYTHON SOURCE_DIR SCRATCH
set -u
oplab=$1 python=$2 src=$3 out=$4
rm -rf "$out" && mkdir -p "$out"
for kernel in roi_align roi_align_f16; do
  "$oplab" fuzz --exec "np=$python $src/examples/python-exec/$kernel.py" --backend np --op roi_align \
    --property differential --cases 300 --out "$out/$kernel" >"$out/$kernel.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then echo "the correct $kernel.py failed (exit $rc):"; tail -20 "$out/$kernel.log"; exit 1; fi
done
"$oplab" fuzz --exec "bug=$python $src/examples/python-exec/roi_align_buggy.py" --backend bug --op roi_align \
  --property differential --time 60 --shrink-time 30 --out "$out/bug" >"$out/bug.log" 2>&1
rc=$?
if [ $rc -ne 1 ]; then echo "the buggy roi_align was not caught (exit $rc):"; tail -20 "$out/bug.log"; exit 1; fi
grep -q '"shrunk": *true' "$out"/bug/failures/*.json || grep -q '"shrunk":true' "$out"/bug/failures/*.json || {
  echo "the failure was not shrunk"; exit 1; }
echo "correct examples (float32, float16) pass; buggy example caught:"
grep -h "vs ref" "$out/bug.log" | head -1
