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
  EquivalentRef(Backend& ref, const std::vector<Divergence>& d) : ref_(ref), divs_(d) {}
  std::string name() const override { return ref_.name(); }
  std::string description() const override { return ref_.description() + " on the divergence's equivalent case"; }
  Result run(const Case& c, const ValidParams&) override { return evaluate(ref_, divergence_equivalent(c, divs_).c); }

 private:
  Backend& ref_;
  const std::vector<Divergence>& divs_;
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
  try {
    EquivalentRef alt(ref, divs);
    const FloatOutcome o = compare_float_backend(alt, backend, c, multiple);
    if (o.verdict == Verdict::Agree || (!flipped && o.verdict == Verdict::BoundaryFlip)) return eq.names;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace oplab::compare
