#!/bin/bash
# CI check of docs/divergences.md: every named divergence's standalone script (`oplab repro
# --all`) is written, runs without oplab, and shows what it claims (exit 0); and the scripts can
# fail: one whose threshold admits everything, or whose claim of a raise is turned around, exits
# 1, and one that cannot import its library exits 2 (the contract of core/repro.h).
# Usage: every_divergence_repro.sh OPLAB PYTHON ORT_NODE_MODULE WORKDIR
set -u
OPLAB=$1 PYTHON=$2 WORK=$4
export ORT_NODE_MODULE=$3
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fail() { echo "FAIL: $*"; failed=1; }
failed=0

"$OPLAB" repro --all "$WORK" 2>"$WORK/written.log"
rc=$?
[ $rc -eq 0 ] || { cat "$WORK/written.log"; echo "FAIL: oplab repro --all exited $rc"; exit 1; }
expected=$("$OPLAB" repro --list | wc -l)
written=$(ls "$WORK"/*.py "$WORK"/*.js 2>/dev/null | wc -l)
[ "$written" -eq "$expected" ] || fail "$written scripts written for $expected divergences"

run() {  # run SCRIPT: its exit code, its output in SCRIPT.out
  case "$1" in
    *.py) "$PYTHON" "$1" >"$1.out" 2>&1 ;;
    *.js) node "$1" >"$1.out" 2>&1 ;;
  esac
}
for s in "$WORK"/*.py "$WORK"/*.js; do
  run "$s"; rc=$?
  if [ $rc -eq 0 ] && grep -q '^SHOWN$' "$s.out"; then echo "shown: $(basename "$s")"
  else fail "$(basename "$s") exited $rc: $(tail -n 3 "$s.out" | tr '\n' ' ')"; fi
done

# The scripts can fail. A threshold above any difference: the disagreement is no longer shown.
for ext in py js; do
  s=$(grep -l '^\(const \)\?THRESHOLD = ' "$WORK"/*."$ext" | xargs grep -L 'RAISES = \(True\|true\)' | head -n 1)
  [ -n "$s" ] || { fail "no .$ext script with values to break"; continue; }
  sed 's/^\(const \)\?THRESHOLD = .*/\1THRESHOLD = 1e300;/' "$s" >"$WORK/broken.$ext"
  run "$WORK/broken.$ext"; rc=$?
  [ $rc -eq 1 ] && echo "a broken $(basename "$s") exits 1" || fail "$(basename "$s") with THRESHOLD 1e300 exited $rc, not 1"
done
# A claimed raise turned around: the library's refusal no longer matches.
s=$(grep -l '^RAISES = True' "$WORK"/*.py | head -n 1)
if [ -n "$s" ]; then
  sed 's/^RAISES = True/RAISES = False/' "$s" >"$WORK/broken_raise.py"
  run "$WORK/broken_raise.py"; rc=$?
  [ $rc -eq 1 ] && echo "a turned-around $(basename "$s") exits 1" || fail "$(basename "$s") with RAISES = False exited $rc, not 1"
fi
# A library that cannot be imported: exit 2, one line.
s=$(ls "$WORK"/*.py | head -n 1)
sed 's/^    import numpy as np$/    import numpy_that_is_not_installed as np/' "$s" >"$WORK/missing.py"
run "$WORK/missing.py"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/missing.py.out")" -eq 1 ] && echo "a missing package exits 2" ||
  fail "a script without numpy exited $rc: $(cat "$WORK/missing.py.out")"
ORT_NODE_MODULE=/nonexistent/onnxruntime-node run "$(ls "$WORK"/*.js | head -n 1)"; rc=$?
[ $rc -eq 2 ] && echo "a missing onnxruntime-node exits 2" || fail "a Node script without onnxruntime-node exited $rc"

[ $failed -eq 0 ] && echo "every divergence's repro shows what it claims ($written scripts)"
exit $failed
