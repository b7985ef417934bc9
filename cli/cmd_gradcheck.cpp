// `oplab gradcheck --op OP|all --backend B|all [--cases N] [--seed S] [--out FILE.json]`:
// finite differences, adjoint tests, one-sided derivatives at kinks and comparison with the
// reference, for every differentiable input of every op, on a fixed-seed sample of cases
// (gradcheck/runner.h). Prints a summary table; writes one JSON record per check.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/external_cli.h"
#include "cli/names.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "gradcheck/runner.h"
#include "peer/divergences.h"

namespace oplab::cli {

namespace {

struct Options {
  std::string op = "all", backend = "ref", cases = "20", seed = "1", out;
  bool no_one_sided = false;
};

// Whole decimal numbers only: "20", not "20x" or "-3"; one-line message otherwise.
bool parse_count(const std::string& text, uint64_t max, uint64_t& value) {
  if (text.empty() || text.size() > 19 || !std::all_of(text.begin(), text.end(), ::isdigit)) return false;
  value = std::strtoull(text.c_str(), nullptr, 10);
  return value <= max;
}

// `line` is the whole message when it already names the verb, else it gets "gradcheck: ".
int fail_usage(const std::string& line) {
  std::cerr << (line.rfind("gradcheck: ", 0) == 0 ? "" : "gradcheck: ") << line << '\n';
  return kUsage;
}

int run_gradcheck(const Options& o) {
  std::vector<std::string> ops;
  for (const auto& d : all_ops())
    if (o.op == "all" || o.op == d.name) ops.push_back(d.name);
  if (ops.empty()) return fail_usage(unknown_name("gradcheck", "op", o.op, op_names(), "or all"));
  // Every name is checked before any work.
  const std::vector<std::string> backends_known = backend_names();
  if (o.backend != "all" && std::find(backends_known.begin(), backends_known.end(), o.backend) == backends_known.end())
    return fail_usage(unknown_name("gradcheck", "backend", o.backend, backends_known, "or all"));
  uint64_t n_cases = 0, seed = 0;
  if (!parse_count(o.cases, 100000, n_cases) || n_cases == 0)
    return fail_usage("--cases=\"" + echo_name(o.cases) + "\" must be a whole number from 1 to 100000");
  if (!parse_count(o.seed, std::numeric_limits<uint64_t>::max(), seed))
    return fail_usage("--seed=\"" + echo_name(o.seed) + "\" must be a non-negative whole number");

  Registry& reg = builtin_backends();
  Backend* ref = reg.find("ref");
  std::vector<Backend*> backends;
  if (o.backend == "all") {
    for (Backend* b : reg.all()) {
      if (b->opt_in()) continue;  // runs only when named
      if (auto why = b->unavailable_reason()) std::cout << "skipping backend " << b->name() << ": " << *why << '\n';
      else backends.push_back(b);
    }
  } else {
    Backend* b = reg.find(o.backend);
    if (!b) return fail_usage(unknown_name("gradcheck", "backend", o.backend, backend_names(), "or all"));
    if (auto why = b->unavailable_reason()) {
      std::cerr << "gradcheck: backend " << b->name() << " cannot run here: " << *why << '\n';
      return kUnavailable;
    }
    backends.push_back(b);
  }

  gradcheck::Options opt;
  opt.seed = seed;
  opt.one_sided = !o.no_one_sided;
  std::vector<gradcheck::CheckRecord> records;
  for (Backend* b : backends) {
    // The peer's named divergences (SPEC §8) explain its disagreements, as in `campaign`.
    const std::vector<Divergence>& known = b->divergences();
    for (const std::string& op : ops)
      for (auto& r : gradcheck::check_op(*b, *ref, op, int(n_cases), opt, known)) records.push_back(std::move(r));
  }

  const auto rows = gradcheck::summarize(records);
  const auto sides = gradcheck::summarize_sides(records);
  gradcheck::print_summary(std::cout, rows);
  gradcheck::print_sides(std::cout, sides);
  int64_t failures = 0;
  FailureTally tally;
  for (const auto& r : records)
    if (r.failed()) ++failures, tally.add(reg.find(r.backend), o.backend != "all");
  for (const auto& r : records)
    if (r.failed()) std::cout << compare::verdict_name(r.verdict) << " " << r.op << " " << r.backend << " " << r.input << " " << r.method << " case " << r.case_index << ": " << r.detail << '\n';

  if (!o.out.empty()) {
    json recs = json::array(), roles = json::object();
    for (Backend* b : backends) roles[b->name()] = backend_role_name(b->role());
    for (const auto& r : records) recs.push_back(gradcheck::record_to_json(r));
    const json doc{{"command", "gradcheck"}, {"op", o.op}, {"backend", o.backend}, {"cases_per_op", n_cases},
                   {"seed", seed}, {"failures", failures}, {"failures_by_role", tally.to_json()}, {"backend_roles", roles}, {"summary", gradcheck::summary_to_json(rows)},
                   {"sides", gradcheck::sides_to_json(sides)}, {"records", recs}};
    try {
      write_json_file_atomic(o.out, doc, 1);
    } catch (const std::exception& e) {
      std::cerr << "gradcheck: " << e.what() << '\n';
      return kFailed;
    }
    std::cout << "\nwrote " << o.out << " (" << records.size() << " records)\n";
  }
  std::cout << tally.describe() << '\n';
  return tally.counted ? kFailed : kOk;
}

}  // namespace

static void add_gradcheck(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand("gradcheck",
                                 "finite-difference, adjoint and kink checks of every backward against its forward and ref");
  sub->add_option("--op", o->op, "op name, or all (default all)");
  sub->add_option("--backend,-b", o->backend, "backend name, or all that run here (default ref)");
  // Parsed as text on purpose (a bad value is one line naming the option), shown as INT.
  sub->add_option("--cases,-n", o->cases, "cases per op (default 20)")->type_name("INT");
  sub->add_option("--seed,-s", o->seed, "seed of the cases and directions (default 1)")->type_name("INT");
  sub->add_option("--out,-o", o->out, "write the records as JSON here");
  sub->add_flag("--no-one-sided", o->no_one_sided, "skip the one-sided derivatives at kinks");
  auto ext = std::make_shared<ExternalArgs>();
  add_external_options(sub, *ext);
  sub->callback([o, ext] {
    if (const std::string bad = install_external_backends(*ext, "gradcheck", ""); !bad.empty()) {
      std::cerr << bad << '\n';
      set_exit_code(kUsage);
      return;
    }
    set_exit_code(run_gradcheck(*o));
  });
}

static const CommandRegistrar registrar(50, add_gradcheck);

}  // namespace oplab::cli
