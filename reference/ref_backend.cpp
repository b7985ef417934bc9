// The `ref` backend: each op's reference registers how it packs its tensors into a Result
// (RefOp, next to the op's reference); the backend only looks it up.
#include "reference/ref_backend.h"

namespace oplab {
namespace {

class RefBackend : public Backend {
 public:
  std::string name() const override { return "ref"; }
  std::string description() const override { return "naive double-precision reference (the spec in code)"; }
  Result run(const Case& c, const ValidParams& vp) override { return OpTraits<RefOp>::of(c.op).run(c, vp); }
};

}  // namespace

std::unique_ptr<Backend> make_ref_backend() { return std::make_unique<RefBackend>(); }

}  // namespace oplab
