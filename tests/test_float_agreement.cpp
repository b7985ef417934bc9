// Every Halide backend that can run here (halide-cpu; halide-opencl where an OpenCL device is; halide-cuda on a GPU machine; and
// their float16 counterparts for the ops they have) against the reference on the fixed-seed
// edge-aimed corpus of every op, forward and backward, by the per-element error bound of SPEC §9
// and §15 at the backend's dtype (compare/float_compare.h: 8x the bound). Boundary flips are
// counted and printed, never passed silently; cases a backend does not support yet are
// counted and printed too.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "cli/builtin_backends.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "compare/float_compare.h"
#include "fuzz/generators.h"
#include "halide/halide_backend.h"
#include "tests/halide_backends.h"

namespace oplab {
namespace {

constexpr uint64_t kSeed = 7;
constexpr int kCases = 300;

class FloatAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(FloatAgreement, HalideBackendsWithinBound) {
  const std::string op = GetParam();
  Backend* ref = builtin_backends().find("ref");
  const auto cases = fuzz::sample_cases(op, kCases, kSeed);
  std::vector<Backend*> backends = runnable_halide_backends("float " + op);
  for (Backend* b : runnable_halide_f16_backends("float16 " + op)) backends.push_back(b);
  for (Backend* b : backends) {
    const std::string name = b->name();
    std::map<std::string, int> count;
    double worst = 0;
    for (const Case& full : cases) {
      // The forward alone, then forward and backward.
      Case forward = full;
      forward.grad_output.reset();
      for (const Case* cp : std::initializer_list<const Case*>{&forward, &full}) {
        const Case& c = *cp;
        const compare::FloatOutcome o = compare::compare_float_backend(*ref, *b, c);
        ++count[std::string(c.grad_output ? "backward " : "forward ") + compare::verdict_name(o.verdict)];
        worst = std::max(worst, o.worst_ratio);
        if (o.verdict == compare::Verdict::Disagree || o.verdict == compare::Verdict::Error) {
        // Keep the case for `oplab eval` / `oplab replay`.
        const auto path = std::filesystem::temp_directory_path() / ("oplab-float-" + op + "-" + name + ".json");
        write_json_file_atomic(path.string(), case_to_json(c));
        std::cout << "[float] failing case saved: " << path.string() << "\n";
      }
      EXPECT_TRUE(o.verdict == compare::Verdict::Agree || o.verdict == compare::Verdict::BoundaryFlip ||
                    o.verdict == compare::Verdict::Unsupported)
            << op << " on " << name << ": " << compare::verdict_name(o.verdict) << ": " << o.detail;
      }
    }
    std::cout << "[float] " << op << " on " << name << ":";
    for (const auto& [k, n] : count) std::cout << " " << k << "=" << n;
    std::cout << " worst error/bound=" << worst << "\n";
  }
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const auto& d : all_ops()) v.push_back(d.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllOps, FloatAgreement, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace oplab
