#include "compare/float_divergence.h"

#include "compare/differential.h"
#include "compare/float_compare.h"

namespace oplab::compare {

namespace {

// The reference as the backend's divergences see it: every case it is asked (the case, its
// magnitude cases, the flip search's alternatives) is evaluated as its divergence equivalent,
// so the bound and the flips are those of the equivalent computation.
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
    Result eq = evaluate(ref_, divergence_equivalent(c, divs_).c);
    if (part_ == Part::Both) return eq;
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

std::optional<std::string> float_divergence(Backend& ref, Backend& backend, const Case& c, bool raised,
                                            double multiple, bool flipped) {
  const std::vector<Divergence>& divs = backend.divergences();
  if (divs.empty()) return std::nullopt;
  if (raised) {
    for (const Divergence& d : divs)
      if (d.peer_raises && d.peer_raises(c)) return d.name;
    return std::nullopt;
  }
  const Equivalent eq = divergence_equivalent(c, divs);
  if (eq.names.empty()) return std::nullopt;
  using Part = EquivalentRef::Part;
  for (Part part : {Part::Both, Part::BackwardOnly, Part::ForwardOnly}) {
    if (part != Part::Both && !c.grad_output) break;
    try {
      EquivalentRef alt(ref, divs, part);
      const FloatOutcome o = compare_float_backend(alt, backend, c, multiple);
      if (o.verdict == Verdict::Agree || (!flipped && o.verdict == Verdict::BoundaryFlip))
        return eq.names + (part == Part::BackwardOnly ? " (backward only)" : part == Part::ForwardOnly ? " (forward only)" : "");
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

}  // namespace oplab::compare
