// The property list and the context every check judges a case in.
#include "fuzz/properties.h"

#include "compare/float_divergence.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/metrics.h"
#include "fuzz/case_edit.h"
#include "fuzz/interrupt.h"
#include "fuzz/wire.h"
#include "fuzz/generators.h"
#include "compare/tolerance.h"

namespace oplab::fuzz {

namespace {

nlohmann::json metrics_json(const Metrics& m) {
  if (m.shape_mismatch) return {{"shape_mismatch", true}};
  return {{"count", m.count}, {"max_abs", m.max_abs}, {"max_rel", m.max_rel}, {"max_abs_small", m.max_abs_small},
          {"diff1", m.diff1}, {"diff2", m.diff2}, {"max_ulp", m.max_ulp},
          {"nonfinite_mismatch", m.nonfinite_mismatch}, {"worst_index", m.worst_index}};
}

// Metrics of a double backend: ULPs in double, th = 1e-6 as SPEC §9 (the split between the
// relative and the absolute half of diff3).
void record_metrics(CheckResult* verdict, const std::string& what, const Tensor& want, const Tensor& got) {
  verdict->metrics[what] = metrics_json(measure(want, got, Dtype::F64, 1e-6));
}

}  // namespace

CheckContext::CheckContext(const Case& c, Backend& subject, Backend& against, const Isolation& iso,
                           SharedAnswers* shared)
    : case_(c), subject_(subject), against_(against), iso_(iso), shared_(shared) {}

Answers::Answer* Answers::find(const Backend& b, const std::string& key) {
  for (Answer& a : list_)
    if (a.backend == &b && a.key == key) return &a;
  return nullptr;
}

const Answers::Answer* Answers::find(const Backend& b, const std::string& key) const {
  return const_cast<Answers*>(this)->find(b, key);  // the same search, read only
}

Answers::Answer& Answers::add(Answer a) {
  if (list_.size() >= kMax) list_.erase(list_.begin());
  list_.push_back(std::move(a));
  return list_.back();
}

Answers& CheckContext::answers_of(const Backend& b) {
  return shared_ && shared_->backend() == &b ? shared_->answers() : own_;
}

// Every evaluation is kept by its case's content, so the properties of one case share one
// evaluation of each case they ask (the unmodified case above all); the oracle's are shared
// with the other subjects' contexts. A crash is kept too, and marks each context it reaches.
Result CheckContext::eval(Backend& b, const Case& c) {
  Answers& answers = answers_of(b);
  std::string key = wire::encode_case(c);
  Answers::Answer* a = answers.find(b, key);
  if (!a) {
    Answers::Answer fresh;
    fresh.backend = &b;
    fresh.key = std::move(key);
    try {
      fresh.result = isolated_evaluate(b, c, iso_);
    } catch (const KernelCrash&) {
      fresh.crashed = true;
      fresh.error = std::current_exception();
    } catch (const std::exception&) {
      fresh.error = std::current_exception();
    }  // Interrupted is no answer: it passes through, nothing kept
    a = &answers.add(std::move(fresh));
  }
  if (a->crashed) crashed_ = true;
  if (a->error) std::rethrow_exception(a->error);
  return *a->result;
}

Result CheckContext::eval_again(Backend& b, const Case& c, const Case& between) {
  // `between` first, its answer (or error) dropped: a kernel whose answer depends on the call
  // before it then sees another previous call than it did the first time.
  auto evaluate_between = [&] {
    try {
      isolated_evaluate(b, between, iso_);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception&) {
    }
  };
  try {
    // A child per evaluation starts from the campaign's state each time: there both run in one
    // child, so that the state one call leaves for the next still shows. So also in this
    // process (isolation none): a plugin's call forks a child of its own here
    // (external/plugin_call.h), which would lose that state the same way.
    if (iso_.mode != IsolationMode::Worker && !b.out_of_process() && !uses_worker(b, iso_))
      return wire::decode(run_forked(
          [&] {
            evaluate_to_bytes(b, between);
            return evaluate_to_bytes(b, c);
          },
          2 * iso_.timeout_s, b.name() + ": " + c.op));
    evaluate_between();
    return isolated_evaluate(b, c, iso_);
  } catch (const KernelCrash&) {
    crashed_ = true;
    throw;
  }
}

Evaluate CheckContext::evaluator() {
  return [this](Backend& b, const Case& c) { return eval(b, c); };
}

const Result* CheckContext::kept(const Backend& b) const {
  const std::string key = wire::encode_case(case_);
  const Answers& answers = shared_ && shared_->backend() == &b ? shared_->answers() : own_;
  const Answers::Answer* a = answers.find(b, key);
  return a && a->result ? &*a->result : nullptr;
}

std::optional<Result> CheckContext::try_eval(Backend& b, const Case& c, CheckResult* verdict) {
  try {
    return eval(b, c);
  } catch (const Unsupported& e) {
    *verdict = CheckResult::unsupported(e.what());
  } catch (const KernelCrash& e) {
    *verdict = CheckResult::error(e.what());
    verdict->crashed = true;
  } catch (const std::exception& e) {
    for (const Divergence& d : divergences_for(b))
      if (d.peer_raises && d.peer_raises(c)) {
        *verdict = CheckResult::skip(b.name() + " raises here (named divergence " + d.name + ")");
        return std::nullopt;
      }
    *verdict = CheckResult::error(b.name() + ": " + e.what());
  }
  return std::nullopt;
}

bool CheckContext::expect_close(const std::string& what, const Tensor& want, const Tensor& got, const Tolerance& tol,
                                CheckResult* verdict) {
  std::string detail;
  if (tensor_error(what, want, got, tol, &detail) <= tol.rtol) return true;
  if (!verdict->failed()) *verdict = CheckResult::fail(detail);
  record_metrics(verdict, what, want, got);
  return false;
}

bool CheckContext::expect_combination(const std::string& what, double a, const Tensor& t1, double b, const Tensor& t2,
                                      const Tensor& got, const Tolerance& tol, CheckResult* verdict) {
  const Tensor want = [&] {
    Tensor w(t1.shape);
    for (size_t i = 0; i < w.data.size(); ++i) w.data[i] = a * t1.data[i] + b * t2.data[i];
    return w;
  }();
  if (got.shape != want.shape) return expect_close(what, want, got, tol, verdict);
  double scale = 0;
  for (size_t i = 0; i < want.data.size(); ++i)
    scale = std::max(scale, std::fabs(a * t1.data[i]) + std::fabs(b * t2.data[i]));
  for (size_t i = 0; i < want.data.size(); ++i) {
    // NaN where the combination is NaN (and the same infinity) is agreement (SPEC §15).
    if (std::isnan(want.data[i]) && std::isnan(got.data[i])) continue;
    if (std::isinf(want.data[i]) && want.data[i] == got.data[i]) continue;
    const double err = std::fabs(got.data[i] - want.data[i]);
    if (!(err <= tol.rtol * (std::fabs(want.data[i]) + tol.floor_scale * (std::isfinite(scale) ? scale : 0)))) {
      if (!verdict->failed()) {
        std::ostringstream os;
        os.precision(17);
        os << what << "[" << i << "]: " << got.data[i] << ", expected " << a << "*" << t1.data[i] << " + " << b << "*"
           << t2.data[i] << " = " << want.data[i];
        *verdict = CheckResult::fail(os.str());
      }
      record_metrics(verdict, what, want, got);
      return false;
    }
  }
  return true;
}

CheckResult CheckContext::judged_apart(const std::function<CheckResult(const Evaluate&)>& judge,
                                       const std::vector<const Backend*>& involved) {
  bool fork_judge = iso_.mode == IsolationMode::PerCase;
  for (const Backend* b : involved) fork_judge &= !b->out_of_process();
  if (!fork_judge) return judge(evaluator());
  const Evaluate direct = [](Backend& b, const Case& c) { return evaluate(b, c); };
  try {
    // A whole comparison evaluates several times (nudged cases): three evaluations' time.
    const std::string bytes = run_forked(
        [&] {
          CheckResult r;
          try {
            r = judge(direct);
          } catch (const std::exception& e) {
            r = CheckResult::error(e.what());
          }
          return nlohmann::json{{"verdict", compare::verdict_name(r.verdict)}, {"detail", r.detail}, {"crashed", r.crashed},
                                {"metrics", r.metrics}, {"worst", r.worst}, {"forward_only", r.forward_only},
                                {"accuracy", r.accuracy ? r.accuracy->to_json() : nlohmann::json()},
                                {"kernel_paths", r.kernel_paths}}
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        },
        3 * iso_.timeout_s, subject_.name() + ": " + case_.op);
    const nlohmann::json j = nlohmann::json::parse(bytes);
    CheckResult r;
    r.verdict = compare::verdict_from_name(j.at("verdict").get<std::string>()).value_or(Verdict::Error);
    r.detail = j.at("detail").get<std::string>();
    r.crashed = j.at("crashed").get<bool>();
    r.metrics = j.at("metrics");
    r.worst = j.at("worst").is_number() ? j.at("worst").get<double>() : 0.0;
    r.forward_only = j.at("forward_only").get<bool>();
    if (j.at("accuracy").is_object()) r.accuracy = compare::AccuracyStats::from_json(j.at("accuracy"));
    r.kernel_paths = j.at("kernel_paths").get<std::vector<std::string>>();
    return r;
  } catch (const KernelCrash& e) {
    crashed_ = true;
    CheckResult r = CheckResult::error(e.what());
    r.crashed = true;
    return r;
  }
}

const std::vector<Property>& all_properties() {
  static const std::vector<Property> list = {
      differential_property(),          rejects_property(),
      linearity_property(),             adjoint_property(),
      permutation_property(),           dcn_zero_offset_conv_property(),
      drp_zero_offset_roialign_property(), interp_same_size_identity_property(),
      determinism_property(),
  };
  return list;
}

const Property* find_property(const std::string& name) {
  for (const Property& p : all_properties())
    if (p.name == name) return &p;
  return nullptr;
}

rc::Gen<Case> property_gen(const Property& p, const std::string& op) {
  return p.invalid_cases ? gen_invalid_case(op) : gen_case(op);
}

std::optional<std::string> divergence_touching(const Backend& b, const Case& c) {
  for (const Divergence& d : b.divergences())
    if (d.peer_raises && d.peer_raises(c)) return d.name;
  // As the judge finds them: a float kernel's box may be empty only in its own type.
  const compare::Equivalent eq = compare::divergences_touching(b, c);
  if (!eq.names.empty()) return eq.names;
  return std::nullopt;
}

std::optional<CheckResult> algebra_skip(const CheckContext& ctx) {
  const Case& c = ctx.the_case();
  if (!c.grad_output) return CheckResult::skip("no grad_output");
  if (!all_finite(c)) return CheckResult::skip("non-finite values: IEEE NaN/Inf break the algebra");
  if (const auto d = divergence_touching(ctx.subject(), c)) return CheckResult::skip("touched by named divergence " + *d);
  return std::nullopt;
}

CheckResult run_check(const Property& p, CheckContext& ctx) {
  if (!p.holds_for_uint8 && ctx.subject().dtype(ctx.the_case().op) == DType::UInt8)
    return CheckResult::skip("a uint8 kernel rounds and clips every pixel: the identity holds before rounding only");
  try {
    return p.check(ctx);
  } catch (const KernelCrash& e) {
    CheckResult r = CheckResult::error(e.what());
    r.crashed = true;
    return r;
  } catch (const std::exception& e) {
    return CheckResult::error(std::string("the check itself failed: ") + e.what());
  }
}

}  // namespace oplab::fuzz
