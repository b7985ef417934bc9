// `oplab compare CASE.json --backend A [--backend B ...]`: one case on several backends, each
// judged against `ref` as a campaign would judge it (compare/verdict.h), with the SPEC §9
// metrics of every output and gradient, so a disagreement is seen tensor by tensor.
// Exit: as every verb (README): 0 every backend agrees or is explained, 1 a DISAGREE or ERROR,
// 2 usage or invalid case, 5 not a case.
#include <iomanip>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/external_cli.h"
#include "cli/names.h"
#include "compare/differential.h"
#include "compare/dtype_case.h"
#include "compare/float_compare.h"
#include "compare/judge.h"
#include "compare/tolerance.h"
#include "core/case_io.h"
#include "core/metrics.h"
#include "core/op_desc.h"
#include "peer/divergences.h"

namespace oplab::cli {

namespace {

void print_tensors(const Result& want, const Result& got, Dtype dtype) {
  auto rows = [&](const char* kind, const std::map<std::string, Tensor>& w, const std::map<std::string, Tensor>& g) {
    for (const auto& [name, t] : w) {
      auto it = g.find(name);
      std::cout << "    " << std::left << std::setw(22) << (std::string(kind) + "." + name) << std::right;
      if (it == g.end()) {
        std::cout << "missing\n";
        continue;
      }
      const Metrics m = measure(t, it->second, dtype, dtype == Dtype::F32 ? 1e-6 : 1e-12);
      if (m.shape_mismatch) {
        std::cout << "shape " << shape_str(it->second.shape) << " != " << shape_str(t.shape) << '\n';
        continue;
      }
      std::cout << std::setprecision(3) << "max_abs " << std::setw(10) << m.max_abs << "  max_rel " << std::setw(10)
                << m.max_rel << "  max_ulp " << std::setw(10) << m.max_ulp << "  non-finite mismatches "
                << m.nonfinite_mismatch << '\n';
    }
  };
  rows("outputs", want.outputs, got.outputs);
  rows("grads", want.grads, got.grads);
}

int run(const std::string& path, const std::vector<std::string>& names) {
  Registry& reg = builtin_backends();
  if (names.empty()) {
    std::cerr << "compare: give at least one --backend (see `oplab backends`)\n";
    return kUsage;
  }
  for (const auto& n : names)
    if (!reg.find(n)) {
      std::cerr << unknown_name("compare", "backend", n, backend_names()) << '\n';
      return kUsage;
    }
  Case c;
  try {
    c = case_from_json(read_json_file(path));
    op_desc(c.op).validate(c);
  } catch (const FormatError& e) {
    std::cerr << e.what() << '\n';
    return kBadFile;
  } catch (const InvalidCase& e) {
    std::cerr << e.what() << '\n';
    return kInvalidCase;
  }
  Backend& ref = *reg.find("ref");
  Result want;
  try {
    want = evaluate(ref, c);
  } catch (const std::exception& e) {
    std::cerr << "compare: ref: " << e.what() << '\n';
    return kFailed;
  }
  std::cout << c.op << " " << c.params.dump() << " against ref\n";
  bool failed = false;
  for (const auto& n : names) {
    Backend& b = *reg.find(n);
    if (auto why = b.unavailable_reason()) {
      std::cout << "  " << n << ": cannot run here: " << *why << '\n';
      continue;
    }
    // The one judge (compare/judge.h): the verdict the campaign's differential property gives.
    const compare::Judgement j = compare::judge(b, ref, c);
    const compare::Verdict verdict = j.verdict;
    const std::string& detail = j.detail;
    failed |= compare::is_failure(verdict);
    const bool bound = compare::judged_by_bound(b, c.op);
    // The dtype it is judged in: "double" (float64, 1e-10) or float32/float16/bfloat16.
    std::cout << "  " << n << " (" << (bound ? dtype_name(b.dtype(c.op)) : "double") << (!bound ? ", 1e-10" : b.dtype(c.op) == DType::UInt8 ? ", uint8 rule" : ", per-element bound")
              << (b.origin().empty() ? "" : "; " + b.origin()) << "): "
              << compare::verdict_name(verdict) << (detail.empty() ? "" : " (" + detail + ")") << '\n';
    if (verdict == compare::Verdict::Unsupported || verdict == compare::Verdict::Error) continue;
    try {
      // Both sides on the case as the backend is sent it (rounded to its dtype).
      const Case sent = compare::case_for(b, c);
      print_tensors(evaluate(ref, sent), evaluate(b, sent), bound ? Dtype::F32 : Dtype::F64);
    } catch (const std::exception& e) {
      std::cout << "    (" << e.what() << ")\n";
    }
  }
  return failed ? kFailed : kOk;
}

}  // namespace

static void add_compare(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto names = std::make_shared<std::vector<std::string>>();
  auto* sub = app.add_subcommand("compare", "one case on several backends against ref: verdict and metrics per tensor");
  sub->add_option("case", *path, "a case file")->required();
  sub->add_option("--backend,-b", *names, "backend to compare (repeatable)");
  auto ext = std::make_shared<ExternalArgs>();
  add_external_options(sub, *ext);
  sub->callback([=] {
    if (const std::string bad = install_external_backends(*ext, "compare", ""); !bad.empty()) {
      std::cerr << bad << '\n';
      set_exit_code(kUsage);
      return;
    }
    set_exit_code(run(*path, *names));
  });
}

static const CommandRegistrar registrar(25, add_compare);

}  // namespace oplab::cli
