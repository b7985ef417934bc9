#include "compare/float_divergence.h"

#include "compare/differential.h"
#include "compare/dtype_case.h"
#include "compare/float_compare.h"
#include "core/geometry_rounding.h"

namespace oplab::compare {

namespace {

// The reference as the backend's divergences see it: every case it is asked (the case, its
// magnitude cases, the flip search's alternatives) is evaluated as its divergence equivalent,
// so the bound and the flips are those of the equivalent computation.
// An equivalent may append rows to an input (ps_roi_align's empty-grid divergence adds a NaN
// image after the case's batch, for the empty boxes to read): the gradient of the case's own
// input is then the leading rows of the equivalent's.
Result leading_rows(Result eq, const Case& c) {
  for (auto& [name, g] : eq.grads) {
    const auto it = c.inputs.find(name);
    if (it == c.inputs.end()) continue;
    const Shape& s = it->second.shape;
    if (g.shape == s || g.shape.size() != s.size() || s.empty() || g.shape[0] < s[0] ||
        !std::equal(s.begin() + 1, s.end(), g.shape.begin() + 1))
      continue;
    g.data.resize(size_t(shape_numel(s)));
    g.shape = s;
  }
  return eq;
}

class EquivalentRef : public Backend {
 public:
  // Which part of the result the equivalent case gives: a divergence may touch the forward
  // or the backward alone (the double comparison judges them apart too, compare/differential.h),
  // and its equivalent case may then have another output shape altogether.
  enum class Part { Both, BackwardOnly, ForwardOnly };
  EquivalentRef(Backend& ref, const std::vector<Divergence>& d, Part part) : ref_(ref), divs_(d), part_(part) {}
  std::string name() const override { return ref_.name(); }
  std::string description() const override { return ref_.description() + " on the divergence's equivalent case"; }
  Result run(const Case& c, const ValidParams&) override {
    const Case e = divergence_equivalent(c, divs_).c;
    Result eq = evaluate(ref_, e);
    if (part_ == Part::Both) return leading_rows(std::move(eq), c);
    Result r = evaluate(ref_, c);
    if (part_ == Part::BackwardOnly) r.grads = std::move(eq.grads);
    else r.outputs = std::move(eq.outputs);
    return r;
  }

 private:
  Backend& ref_;
  const std::vector<Divergence>& divs_;
  Part part_;
};

}  // namespace

// In double first; for a kernel of a narrower type also on the case as it receives it (inputs
// rounded to T) and as T forms it (float parameters and box corners in T), with the geometry
// formed the way the flip search forms it (in T, and in float32 for half types): a float16 box
// from x = -3340 to -3339.12 is one point once its corners are half values, a location is an
// ulp off an integer only after float32's 2 loc - 1.
Equivalent divergences_touching(const Backend& b, const Case& c) {
  const std::vector<Divergence>& divs = b.divergences();
  const DType t = b.dtype(c.op);
  Equivalent eq = divergence_equivalent(c, divs);
  if (!eq.names.empty() || t == DType::Float64) return eq;
  const Case sent = case_for(b, c);
  std::vector<DType> geometries = {t};
  if (t != DType::Float32) geometries.push_back(DType::Float32);
  for (DType g : geometries)
    for (const Case& x : {sent, dtype_formed_case(sent, g)}) {
      try {
        GeometryIn scope(g);
        eq = divergence_equivalent(x, divs);
        if (!eq.names.empty()) return eq;
      } catch (const std::exception&) {  // a scale rounded to T may size the output otherwise:
      }                                  // such a form of the case proves nothing
    }
  return eq;
}

std::optional<std::string> float_divergence(Backend& ref, Backend& backend, const Case& c, bool raised,
                                            double multiple, bool flipped, std::string* exhausted) {
  const std::vector<Divergence>& divs = backend.divergences();
  if (divs.empty()) return std::nullopt;
  if (raised) {
    for (const Divergence& d : divs)
      if (d.peer_raises && d.peer_raises(c)) return d.name;
    return std::nullopt;
  }
  const Equivalent eq = divergences_touching(backend, c);
  if (eq.names.empty()) return std::nullopt;
  using Part = EquivalentRef::Part;
  for (Part part : {Part::Both, Part::BackwardOnly, Part::ForwardOnly}) {
    if (part != Part::Both && !c.grad_output) break;
    try {
      EquivalentRef alt(ref, divs, part);
      const FloatOutcome o = compare_float_backend(alt, backend, c, multiple);
      const bool exhausts = o.verdict == Verdict::PrecisionExhausted && exhausted;
      if (exhausts) *exhausted = o.detail;
      if (o.verdict == Verdict::Agree || (!flipped && o.verdict == Verdict::BoundaryFlip) || exhausts)
        return eq.names + (part == Part::BackwardOnly ? " (backward only)" : part == Part::ForwardOnly ? " (forward only)" : "");
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

}  // namespace oplab::compare
