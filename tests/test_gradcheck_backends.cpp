// Every backend built into this binary that can run here, on every op it supports: its
// gradients against its own forward (finite differences, adjoint), at the kinks (which side),
// against the reference's gradients, and structurally (entries, shapes, zero grad_output,
// absent optional inputs). Backends that must be right are held to it: ref, the torchvision
// peer (up to its proven named divergences) and the Halide kernels (up to float32 boundary
// flips). The study and seeded-bug variants are run too, and reported, not judged here
// (test_gradcheck_bugs.cpp judges the gradient variants).
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "cli/builtin_backends.h"
#include "core/op_desc.h"
#include "gradcheck/record.h"
#include "gradcheck/runner.h"
#include "peer/divergences.h"

namespace oplab::gradcheck {
namespace {

constexpr uint64_t kSeed = 20261122;

bool must_be_right(const std::string& name) {
  return name == "ref" || name == "torchvision" || name.rfind("halide-", 0) == 0;
}

constexpr int kCases = 16;

TEST(GradBackends, EveryBackendThatRunsHere) {
  Backend* ref = builtin_backends().find("ref");
  std::set<std::string> checked;
  for (Backend* b : builtin_backends().all()) {
    if (auto why = b->unavailable_reason()) {
      std::cout << "[gradcheck] " << b->name() << " cannot run here: " << *why << "\n";
      continue;
    }
    const std::vector<Divergence>& known = b->name() == "torchvision" ? torchvision_divergences() : std::vector<Divergence>{};
    Options opt;
    opt.seed = kSeed;
    opt.one_sided_max = 4;
    std::vector<CheckRecord> all;
    for (const auto& d : all_ops())
      for (auto& r : check_op(*b, *ref, d.name, kCases, opt, known)) all.push_back(std::move(r));
    const auto rows = summarize(all);
    print_summary(std::cout, rows);
    print_sides(std::cout, summarize_sides(all));
    // Evidence for an input: finite differences that passed, failed, or were explained.
    for (const auto& s : rows)
      if (s.method == "fd-projection" && s.checks > s.count(Verdict::Skipped) + s.count(Verdict::Unsupported))
        checked.insert(b->name() + " " + s.op + " " + s.input);
    // Every differentiable input of every op the backend answers is checked on it (a backend
    // that fails to answer the op's cases, as a seeded cheater does, has those failures instead).
    std::set<std::string> supported, refused;
    for (const auto& r : all) {
      if (r.method == "shapes") supported.insert(r.op);
      if (r.method == "support" && r.failed()) refused.insert(r.op);
    }
    for (const std::string& op : refused) supported.erase(op);
    for (const auto& d : all_ops())
      for (const auto& in : d.inputs)
        if (in.differentiable && supported.count(d.name))
          EXPECT_TRUE(checked.count(b->name() + " " + d.name + " " + in.name)) << b->name() << " " << d.name << " " << in.name;
    if (!must_be_right(b->name())) continue;
    for (const auto& r : all)
      EXPECT_FALSE(r.failed()) << b->name() << " " << r.op << " " << r.input << " " << r.method << " case "
                               << r.case_index << ": " << r.detail;
  }
  // The reference and the peer take on every op (the peer all but deform_roi_pool, an mmcv op).
  for (const auto& d : all_ops())
    for (const auto& in : d.inputs) {
      if (!in.differentiable) continue;
      EXPECT_TRUE(checked.count("ref " + d.name + " " + in.name)) << d.name << " " << in.name;
      if (d.name != "deform_roi_pool" && !builtin_backends().find("torchvision")->unavailable_reason())
        EXPECT_TRUE(checked.count("torchvision " + d.name + " " + in.name)) << d.name << " " << in.name;
    }
}

}  // namespace
}  // namespace oplab::gradcheck
