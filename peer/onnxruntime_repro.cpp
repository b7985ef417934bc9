// The onnxruntime peer's standalone reproductions (core/repro.h): a Node script that runs the
// very one-node ONNX model the bridge runs for the case (its bytes in base64, from the bridge's
// `--model` mode) on ONNX Runtime's CPU execution provider with one thread, and compares the
// answer with the reference's values written into it.
#include "peer/onnxruntime_repro.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace oplab {

namespace {

std::string js_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string js_tensors(const std::map<std::string, Tensor>& m) {
  std::ostringstream o;
  o << "{\n";
  for (const auto& [name, t] : m) {
    o << "  " << name << ": { dims: " << json(t.shape).dump() << ", data: [";
    for (size_t i = 0; i < t.data.size(); ++i) o << (i ? (i % 8 == 0 ? ",\n    " : ", ") : "") << js_number(t.data[i]);
    o << "] },\n";
  }
  o << "}";
  return o.str();
}

std::string js_comment(const std::string& text) {
  std::istringstream in(text);
  std::string word, line, out;
  while (in >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > 94) {
      out += "// " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + "// " + line + "\n";
}

// Run, print, compare and exit by the contract of core/repro.h (as the Python skeleton does).
const char* const kTail = R"JS(
function distance(got, want) {
  // The largest |got - want| over the tensors of `want`: NaN against NaN and equal infinities
  // are equal; NaN against a number, or another shape, is infinitely far.
  let d = 0;
  for (const [name, w] of Object.entries(want)) {
    const g = got[name];
    if (!g || g.dims.join(',') !== w.dims.join(',')) return Infinity;
    for (let i = 0; i < w.data.length; ++i) {
      const a = g.data[i], b = w.data[i];
      if (a === b || (Number.isNaN(a) && Number.isNaN(b))) continue;
      const e = Math.abs(a - b);
      d = Math.max(d, Number.isNaN(e) ? Infinity : e);
    }
  }
  return d;
}

async function main() {
  const feeds = {};
  for (const [name, f] of Object.entries(FEEDS)) {
    const data = f.type === 'int64' ? BigInt64Array.from(f.data, (v) => BigInt(v))
      : f.type === 'uint8' ? Uint8Array.from(f.data)
      : (f.type === 'float64' ? Float64Array : Float32Array).from(f.data, Number);
    feeds[name] = new ort.Tensor(f.type, data, f.dims);
  }
  let got;
  try {
    const session = await ort.InferenceSession.create(MODEL, {
      executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled',
    });
    const y = (await session.run(feeds)).Y;
    got = { output: { dims: y.dims.map(Number), data: Array.from(y.data, Number) } };
  } catch (e) {
    console.log(`ONNX Runtime raised: ${String(e.message || e).split('\n')[0]}`);
    console.log(RAISES ? 'SHOWN' : 'NOT SHOWN: ONNX Runtime raised, the spec has values');
    return RAISES ? 0 : 1;
  }
  if (RAISES) {
    // Refusing the case includes answering a shape other than the case's output shape.
    const refused = got.output.dims.join(',') !== SPEC.output.dims.join(',');
    console.log(`ONNX Runtime answered shape [${got.output.dims}], the spec's is [${SPEC.output.dims}]`);
    console.log(refused ? 'SHOWN' : 'NOT SHOWN: ONNX Runtime answered the case');
    return refused ? 0 : 1;
  }
  for (const name of Object.keys(SPEC)) {
    console.log(`${name}, library: ${got[name].data.join(' ')}`);
    console.log(`${name}, spec:    ${SPEC[name].data.join(' ')}`);
    if (Object.keys(CLAIMED).length) console.log(`${name}, claimed: ${CLAIMED[name].data.join(' ')}`);
  }
  const dSpec = distance(got, SPEC);
  console.log(`largest difference from the spec: ${dSpec} (threshold ${THRESHOLD})`);
  let shown = dSpec > THRESHOLD;
  if (Object.keys(CLAIMED).length) {
    const dClaimed = distance(got, CLAIMED);
    console.log(`largest difference from the claimed values: ${dClaimed}`);
    shown = shown && dClaimed <= THRESHOLD;
  }
  console.log(shown ? 'SHOWN' : 'NOT SHOWN: the library no longer computes what this script claims');
  return shown ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => {
  console.log(`cannot run: ${String(e.message || e).split('\n')[0]}`);
  process.exit(2);
});
)JS";

}  // namespace

ReproScript onnxruntime_repro(const ReproRequest& r, const json& model, const std::string& version) {
  std::ostringstream o;
  o << "#!/usr/bin/env node\n"
    << js_comment(r.subject + ": " + r.c.op + " on ONNX Runtime" + (version.empty() ? "" : " " + version) +
                  " (onnxruntime-node), CPU execution provider, one thread.")
    << "//\n"
    << js_comment(r.claim) << "//\n"
    << js_comment("Written by `" + r.command + "`; runs without oplab, with onnxruntime-node (found by require(), or at " +
                  "$ORT_NODE_MODULE). MODEL is the one-node ONNX model run on FEEDS; SPEC holds oplab's double-precision " +
                  "reference on this case (the specification's values)" +
                  (r.claimed.empty() ? "" : ", CLAIMED what ONNX Runtime computes instead by the claim above") +
                  (r.raises ? "; the claim is that ONNX Runtime refuses the case (raises, or answers another shape)." : ".") +
                  " Exit 0: ONNX Runtime still shows it; 1: it no longer does; 2: this script cannot run here.")
    << "// The case: " << r.c.op << " " << r.c.params.dump() << "\n"
    << "'use strict';\n\nlet ort;\ntry {\n  ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');\n"
    << "} catch (e) {\n  console.log(`cannot run: ${e.message.split('\\n')[0]}`);\n  process.exit(2);\n}\n"
    << "ort.env.logLevel = 'error';\n\n"
    << "const MODEL = Buffer.from('" << model.at("model").get<std::string>() << "', 'base64');\n"
    << "const FEEDS = " << model.at("feeds").dump() << ";\n"
    << "for (const f of Object.values(FEEDS)) f.data = f.data.map((v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v));\n"
    << "const SPEC = " << js_tensors(r.spec) << ";\n"
    << "const CLAIMED = " << (r.claimed.empty() ? std::string("{}") : js_tensors(r.claimed)) << ";\n"
    << "const RAISES = " << (r.raises ? "true" : "false") << ";\n"
    << "const THRESHOLD = " << js_number(r.threshold) << ";\n"
    << kTail;
  return ReproScript{o.str(), ".js", "node"};
}

}  // namespace oplab
