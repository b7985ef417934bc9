#!/bin/sh
# The HTML report as a reviewer's browser shows it: a small campaign and benchmark, `oplab report`,
# then headless Chromium (Debian's `chromium`, installed by scripts/setup.sh) loads the page with
# page_check.js and reports what it measured: every image loads, nothing is wider than the page,
# the verdict grid's statuses are text in coloured boxes. The first screen is kept as a
# screenshot (SCRATCH/first-screen.png; no emoji font is needed to read it). Two broken copies
# prove the check can fail: one with an image that does not load, one whose tables leave their
# scrolling boxes and do not wrap their cells.
# Usage: browser_test.sh OPLAB SOURCE_DIR SCRATCH
set -u
oplab=$1 src=$2 out=$3
command -v chromium >/dev/null || { echo "chromium is not installed (scripts/setup.sh installs it)"; exit 77; }
rm -rf "$out" && mkdir -p "$out/run"
"$oplab" campaign --cases 12 --seed 3 --op roi_align --op interpolate --op grid_sample --out "$out/run/campaign" \
  >"$out/campaign.log" 2>&1
[ $? -le 1 ] || { echo "the campaign did not run:"; tail -5 "$out/campaign.log"; exit 1; }
"$oplab" bench --reduced --shape nearest --repeats 1 --warmup 0 --no-backward --out "$out/run/bench.json" \
  >"$out/bench.log" 2>&1 || { echo "the bench did not run:"; tail -5 "$out/bench.log"; exit 1; }
"$oplab" report --from "$out/run" --out "$out/report" >"$out/report.log" 2>&1 ||
  { echo "the report was not built:"; tail -5 "$out/report.log"; exit 1; }

browse() {  # browse PAGE.html -> the JSON page_check.js measured
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1000 \
    --virtual-time-budget=10000 --dump-dom "file://$1" 2>/dev/null |
    sed -n 's:.*<pre id="oplab-page-check"[^>]*>\(.*\)</pre>.*:\1:p'
}
checked() {  # checked SOURCE.html COPY.html [SED-SCRIPT]: the copy with page_check.js, altered by SED-SCRIPT
  sed -e "${3:-}" -e 's:</body>:<script>'"$(tr '\n' ' ' <"$src/tests/report/page_check.js" | sed 's/[&:\\]/\\&/g')"'</script></body>:' \
    "$1" >"$2"
}

checked "$out/report/index.html" "$out/report/checked.html" ""
result=$(browse "$out/report/checked.html")
echo "report: $result"
[ -n "$result" ] || { echo "the page check did not run in chromium"; exit 1; }
echo "$result" | grep -q '"problems":\[\]' || { echo "the report has problems (above)"; exit 1; }
for word in PASS CAUGHT; do
  echo "$result" | grep -q "\"$word\"" || { echo "the verdict grid shows no $word status"; exit 1; }
done

# The broken copies must fail the same check.
checked "$out/report/index.html" "$out/report/missing-image.html" 's:</h1>:</h1><img src="missing-figure.png" alt="missing">:'
broken=$(browse "$out/report/missing-image.html")
echo "$broken" | grep -q 'image does not load' || { echo "a missing image went unseen: $broken"; exit 1; }
checked "$out/report/index.html" "$out/report/overflowing-table.html" \
  's#<div class="scroll">#<div>#g; s#</style>#td, code { white-space: nowrap; overflow-wrap: normal; }</style>#'
broken=$(browse "$out/report/overflowing-table.html")
echo "$broken" | grep -q 'reaches\|px wide' || { echo "a table wider than the page went unseen: $broken"; exit 1; }

timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1000 \
  --screenshot="$out/first-screen.png" "file://$out/report/index.html" >/dev/null 2>&1
[ -s "$out/first-screen.png" ] || { echo "no screenshot was taken"; exit 1; }
echo "the report passes in chromium; broken copies fail; first screen: $out/first-screen.png"
