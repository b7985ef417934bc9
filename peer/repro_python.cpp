#include "peer/repro_python.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace oplab {

std::string py_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(int64_t(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string py_value(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return py_number(v.get<double>());
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py_value(v[i]);
    return s + "]";
  }
  return v.dump();  // a string: JSON's quoting is Python's for the strings of a case
}

namespace {

// arr([shape], [values]) on as few lines as stay readable.
std::string py_array(const Tensor& t) {
  std::ostringstream o;
  o << "arr([";
  for (size_t i = 0; i < t.shape.size(); ++i) o << (i ? ", " : "") << t.shape[i];
  o << "], [";
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (i) o << (i % 8 == 0 ? ",\n    " : ", ");
    o << py_number(t.data[i]);
  }
  o << "])";
  return o.str();
}

std::string py_tensors(const std::map<std::string, Tensor>& m) {
  std::string s = "{\n";
  for (const auto& [name, t] : m) s += "    \"" + name + "\": " + py_array(t) + ",\n";
  return s + "}";
}

// The part every Python reproduction shares after the peer's library(): run it, print the
// values side by side, compare, and exit by the contract of core/repro.h.
const char* const kTail = R"PY(

def distance(got, want):
    """The largest |got - want| over the tensors of `want`; NaN against NaN and equal
    infinities are equal, NaN against a number or another shape is infinitely far."""
    d = 0.0
    for name, w in want.items():
        g = np.asarray(got[name], dtype=np.float64)
        if g.shape != w.shape:
            return inf
        with np.errstate(invalid="ignore"):
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            diff = np.where(same, 0.0, np.abs(g - w))
        diff = np.where(np.isnan(diff), inf, diff)
        d = max(d, float(diff.max(initial=0.0)))
    return d


def main():
    try:
        got = library()
    except Exception as e:  # the library refusing the case is its answer
        print("the library raised %s: %s" % (type(e).__name__, " ".join(str(e).split())))
        print("SHOWN" if RAISES else "NOT SHOWN: the library raised, the spec has values")
        return 0 if RAISES else 1
    if RAISES:
        # Refusing the case includes answering a shape other than the case's output shape.
        shape = np.asarray(got["output"]).shape
        print("the library answered shape %s, the spec's is %s" % (list(shape), list(spec["output"].shape)))
        print("SHOWN" if shape != spec["output"].shape else "NOT SHOWN: the library answered the case")
        return 0 if shape != spec["output"].shape else 1
    np.set_printoptions(precision=17, linewidth=100)
    for name in spec:
        print("%s, library: %s" % (name, np.asarray(got[name], dtype=np.float64).ravel()))
        print("%s, spec:    %s" % (name, spec[name].ravel()))
        if claimed:
            print("%s, claimed: %s" % (name, claimed[name].ravel()))
    d_spec = distance(got, spec)
    print("largest difference from the spec: %.17g (threshold %.3g)" % (d_spec, THRESHOLD))
    shown = d_spec > THRESHOLD
    if claimed:
        d_claimed = distance(got, claimed)
        print("largest difference from the claimed values: %.17g" % d_claimed)
        shown = shown and d_claimed <= THRESHOLD
    print("SHOWN" if shown else "NOT SHOWN: the library no longer computes what this script claims")
    return 0 if shown else 1


if __name__ == "__main__":
    sys.exit(main())
)PY";

std::string comment_lines(const std::string& text) {
  // Wrapped at about 96 columns for the docstring.
  std::istringstream in(text);
  std::string word, line, out;
  while (in >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > 96) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

}  // namespace

ReproScript python_repro(const ReproRequest& r, const PythonRepro& p) {
  std::ostringstream o;
  o << "#!/usr/bin/env python3\n\"\"\"" << r.subject << ": " << r.c.op << " on " << p.about << ".\n\n"
    << comment_lines(r.claim) << "\n\n"
    << comment_lines("Written by `" + r.command + "`; runs without oplab, with " + p.needs +
                     ". `spec` holds oplab's double-precision reference on this case (the specification's values" +
                     (r.claimed.empty() ? "" : "), `claimed` what the library computes instead by the claim above (") +
                     (r.raises ? "); the claim is that the library refuses the case (raises, or answers another shape)." : ").") +
                     " Exit 0: the library still shows it; 1: it no longer does; 2: this script cannot run here.")
    << "\n\"\"\"\nimport sys\n\ntry:\n    import numpy as np\n";
  std::istringstream imports(p.imports);
  for (std::string line; std::getline(imports, line);) o << "    " << line << "\n";
  o << "except ImportError as e:\n    print(\"cannot run: %s\" % e)\n    sys.exit(2)\n\n"
    << "nan, inf = float(\"nan\"), float(\"inf\")\n\n\n"
    << "def arr(shape, values):\n    return np.array(values, dtype=np.float64).reshape(shape)\n\n\n"
    << "# The case: " << r.c.op << " " << r.c.params.dump() << "\n"
    << "inputs = " << py_tensors(r.c.inputs) << "\n";
  if (r.c.grad_output) o << "grad_output = " << py_array(*r.c.grad_output) << "\n";
  o << "\n\n" << p.library << "\n\n"
    << "spec = " << py_tensors(r.spec) << "\n"
    << "claimed = " << (r.claimed.empty() ? std::string("{}") : py_tensors(r.claimed)) << "\n"
    << "RAISES = " << (r.raises ? "True" : "False") << "\n"
    << "THRESHOLD = " << py_number(r.threshold) << "\n"
    << kTail;
  return ReproScript{o.str(), ".py", "python3"};
}

}  // namespace oplab
