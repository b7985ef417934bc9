#pragma once
// Named divergences of a backend judged by the per-element bound (a float32 peer: opencv,
// onnxruntime's float32 ops). As in the double comparison (compare/differential.h), a
// disagreement is a named divergence only when the reference, run on the divergence's
// equivalent case, reproduces the backend's answer, here within the same per-element bound
// (boundary flips allowed as they are on the original case); a backend that raises on a case
// one of its divergences says it raises on is that divergence too.
#include <optional>
#include <string>

#include "compare/differential.h"
#include "core/backend.h"

namespace oplab::compare {

// The named divergences of `b` whose equivalent case applies to `c`: in double, or for a
// backend of a narrower dtype T, on the case as T forms it with the reference's geometry in T
// (and in float32 for half types), where a box or a location may meet a divergence it does not
// meet in double. `names` empty: none.
Equivalent divergences_touching(const Backend& b, const Case& c);

// The names ("a+b", as divergence_equivalent joins them) that explain the backend's
// disagreement on `c`, or nullopt. `raised`: the backend threw on `c` (not Unsupported, not a
// crash) rather than answering. `flipped`: the case passed only as a boundary flip; a divergence
// then explains it only if the reference on its equivalent case agrees without any flip.
// `exhausted`, when given: a divergence may also explain a case whose equivalent the dtype's
// precision cannot judge (a float16 kernel that accumulates in half, whose bound admits
// everything); the precision-exhausted detail is written there (empty otherwise), and that
// case's verdict is precision-exhausted, not the divergence.
std::optional<std::string> float_divergence(Backend& ref, Backend& backend, const Case& c, bool raised,
                                            double multiple, bool flipped = false, std::string* exhausted = nullptr);

}  // namespace oplab::compare
