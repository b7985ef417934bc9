// `oplab campaign`: the main job. Draws a fixed-seed sample of cases for every op, runs
// every backend that can run here against `ref`, prints a summary table and writes the
// results as JSON (one record per op x backend, plus every failing case, replayable with
// `oplab eval`).
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "compare/accuracy_stats.h"
#include "compare/differential.h"
#include "compare/float_compare.h"
#include "fuzz/generators.h"
#include "peer/divergences.h"

namespace oplab::cli {

namespace {

struct Options {
  int cases = 500;
  uint64_t seed = 1;
  std::string out = "out/campaign";
  std::vector<std::string> ops;
  std::vector<std::string> backends;
};

// A float32 backend's verdict (error bound, boundary flips) in the campaign's terms: flips are
// reported like named divergences, under their own name. Accuracy details go to `stats`.
compare::Outcome float_outcome(Backend& ref, Backend& b, const Case& c, compare::AccuracyStats& stats) {
  const compare::FloatOutcome f = compare::compare_float_backend(ref, b, c);
  stats.add(c, f);
  compare::Outcome o;
  o.detail = f.detail;
  o.max_rel = f.worst_ratio;
  switch (f.kind) {
    case compare::FloatOutcome::Pass: o.verdict = compare::Verdict::Agree; break;
    case compare::FloatOutcome::Flip: o.verdict = compare::Verdict::NamedDivergence; o.divergence = "fp32-boundary-flip"; break;
    case compare::FloatOutcome::Fail: o.verdict = compare::Verdict::Disagree; break;
    case compare::FloatOutcome::Unsupported: o.verdict = compare::Verdict::Unsupported; break;
    case compare::FloatOutcome::Error: o.verdict = compare::Verdict::Error; break;
  }
  return o;
}

int run_campaign(const Options& opt) {
  namespace fs = std::filesystem;
  fs::create_directories(fs::path(opt.out) / "failures");
  Registry& reg = builtin_backends();
  Backend* ref = reg.find("ref");
  std::vector<std::string> ops = opt.ops;
  if (ops.empty())
    for (const auto& d : all_ops()) ops.push_back(d.name);

  std::vector<Backend*> others;
  json skipped = json::array();
  for (Backend* b : reg.all()) {
    if (b == ref) continue;
    if (!opt.backends.empty() && std::find(opt.backends.begin(), opt.backends.end(), b->name()) == opt.backends.end())
      continue;
    if (auto why = b->unavailable_reason()) {
      std::cout << "skipping backend " << b->name() << ": " << *why << '\n';
      skipped.push_back({{"backend", b->name()}, {"reason", *why}});
      continue;
    }
    others.push_back(b);
  }

  json records = json::array();
  int failures = 0;
  FailureTally tally;
  const bool named = !opt.backends.empty();
  std::cout << std::left << std::setw(16) << "op" << std::setw(32) << "backend" << std::right << std::setw(7) << "cases"
            << std::setw(7) << "agree" << std::setw(10) << "diverge" << std::setw(8) << "unsupp" << std::setw(9)
            << "DISAGREE" << std::setw(7) << "ERROR" << std::setw(12) << "worst" << std::setw(10) << "cases/s" << '\n';
  for (const std::string& op : ops) {
    const std::vector<Case> cases = fuzz::sample_cases(op, opt.cases, opt.seed);
    for (Backend* b : others) {
      const std::vector<Divergence>& known = b->divergences();
      compare::Tolerance tol;  // double against double: 1e-10 (see README, "Agreement")
      std::map<std::string, int> count, divergences;
      compare::AccuracyStats accuracy;
      double worst = 0;
      const auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < cases.size(); ++i) {
        auto compare = [&](const Case& c) {
          return b->is_float32() ? float_outcome(*ref, *b, c, accuracy) : compare::compare_on_case(*ref, *b, c, tol, known);
        };
        compare::Outcome o = compare(cases[i]);
        if (o.verdict == compare::Verdict::Unsupported && cases[i].grad_output) {
          // A backend without this backward is still held to its forward.
          Case forward = cases[i];
          forward.grad_output.reset();
          o = compare(forward);
          if (o.verdict != compare::Verdict::Unsupported) ++count["forward only"];
        }
        ++count[compare::verdict_name(o.verdict)];
        if (o.verdict == compare::Verdict::NamedDivergence) ++divergences[o.divergence];
        if (o.verdict == compare::Verdict::Agree) worst = std::max(worst, o.max_rel);
        if (o.verdict == compare::Verdict::Disagree || o.verdict == compare::Verdict::Error) {
          ++failures;
          tally.add(b, named);
          const std::string file = (fs::path(opt.out) / "failures" /
                                    (op + "-" + b->name() + "-" + std::to_string(i) + ".json")).string();
          write_json_file_atomic(file, case_to_json(cases[i]));
          std::cout << "  " << compare::verdict_name(o.verdict) << " " << op << " on " << b->name() << ": " << o.detail
                    << "\n    replay: oplab eval " << file << " --backend " << b->name() << '\n';
        }
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::cout << std::left << std::setw(16) << op << std::setw(32) << b->name() << std::right << std::setw(7)
                << cases.size() << std::setw(7) << count["agree"] << std::setw(10) << count["named-divergence"]
                << std::setw(8) << count["unsupported"] << std::setw(9) << count["DISAGREE"] << std::setw(7)
                << count["ERROR"] << std::setw(12) << std::setprecision(2) << worst << std::setw(10)
                << std::fixed << std::setprecision(0) << double(cases.size()) / secs << std::defaultfloat << '\n';
      if (count["forward only"]) std::cout << "    forward only (no backward kernel): " << count["forward only"] << '\n';
      for (const auto& [name, n] : divergences) std::cout << "    divergence " << name << ": " << n << '\n';
      records.push_back({{"op", op}, {"backend", b->name()}, {"role", backend_role_name(b->role())}, {"against", "ref"}, {"cases", cases.size()},
                         {"verdicts", count}, {"divergences", divergences}, {"max_rel_agreeing", worst},
                         {"seconds", secs}, {"rtol", tol.rtol}});
      if (b->is_float32()) {
        records.back()["accuracy"] = accuracy.to_json();
        records.back()["bound_multiple"] = compare::kDefaultBoundMultiple;
        records.back().erase("rtol");
        std::cout << "    boundary flips: " << accuracy.flip_summary() << '\n';
        // More flips than the op's stated budget is a finding: a kernel that takes decisions
        // the other way more often than its rounding explains (compare/flip_rule.h).
        if (accuracy.over_flip_budget()) {
          ++failures;
          tally.add(b, named);
          records.back()["finding"] = "boundary flips over budget";
          std::cout << "  FLIPS OVER BUDGET " << op << " on " << b->name() << '\n';
        }
      }
    }
  }
  const json summary{{"seed", opt.seed}, {"cases_per_op", opt.cases}, {"records", records},
                     {"skipped_backends", skipped}, {"failures", failures}, {"failures_by_role", tally.to_json()}};
  const std::string path = (fs::path(opt.out) / "campaign.json").string();
  write_json_file_atomic(path, summary, 2);
  std::cout << "\nwrote " << path << " (" << tally.describe() << ")\n";
  return tally.counted ? kFailed : kOk;
}

}  // namespace

static void add_campaign(CLI::App& app) {
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("campaign", "the default campaign: every op on every backend against ref, summary + JSON");
  sub->add_option("--cases,-n", opt->cases, "cases per op")->check(CLI::PositiveNumber);
  sub->add_option("--seed,-s", opt->seed, "seed of the case generators");
  sub->add_option("--out,-o", opt->out, "output folder");
  sub->add_option("--op", opt->ops, "only these ops (repeatable)");
  sub->add_option("--backend,-b", opt->backends, "only these backends (repeatable)");
  sub->callback([opt] { set_exit_code(run_campaign(*opt)); });
}

static const CommandRegistrar registrar(30, add_campaign);

}  // namespace oplab::cli
