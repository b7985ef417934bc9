#include "fuzz/campaign.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "core/case_io.h"
#include "core/limits.h"
#include "core/op_desc.h"
#include "fuzz/campaign_log.h"
#include "fuzz/campaign_records.h"
#include "fuzz/campaign_state.h"
#include "fuzz/generators.h"
#include "fuzz/interrupt.h"
#include "fuzz/progress.h"
#include "fuzz/prefetch.h"
#include "fuzz/properties.h"
#include "fuzz/replay_command.h"
#include "fuzz/shrink.h"

namespace oplab::fuzz {

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

struct Plan {
  std::vector<std::string> ops;
  std::vector<Backend*> subjects;
  Backend* against = nullptr;
  std::vector<const Property*> properties;
  json unavailable = json::object();  // backend -> why it cannot run here (left out of "all")
};

// How a check failed, coarsely: shrinking keeps only candidates that fail the same way, so a
// hang does not shrink into a segfault of another input (both failures, different bugs).
std::string failure_kind(const CheckResult& r) {
  if (!r.crashed) return "fails";
  if (r.detail.find("hung:") != std::string::npos) return "hangs";
  const size_t at = r.detail.find("crashed:");
  return at == std::string::npos ? "crashes" : r.detail.substr(at);
}

bool is_all(const std::vector<std::string>& v) { return v.empty() || (v.size() == 1 && v[0] == "all"); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Plan resolve(const CampaignOptions& opt, Registry& reg) {
  Plan plan;
  std::vector<std::string> known_ops;
  for (const auto& d : all_ops()) known_ops.push_back(d.name);
  if (is_all(opt.ops)) {
    plan.ops = known_ops;
  } else {
    for (const auto& op : opt.ops) {
      if (std::find(known_ops.begin(), known_ops.end(), op) == known_ops.end())
        throw std::invalid_argument("fuzz: unknown op \"" + op + "\" (known: " + joined(known_ops) + ", or all)");
      plan.ops.push_back(op);
    }
  }
  plan.against = reg.find(opt.against);
  if (!plan.against) throw std::invalid_argument("fuzz: unknown backend \"" + opt.against + "\" for --against (see `oplab backends`)");
  if (auto why = plan.against->unavailable_reason())
    throw BackendUnavailable("fuzz: --against " + opt.against + " cannot run here: " + *why);
  if (is_all(opt.backends) && !opt.backends.empty()) {
    for (Backend* b : reg.all()) {
      if (b->opt_in()) continue;  // runs only when named
      if (auto why = b->unavailable_reason()) plan.unavailable[b->name()] = *why;
      else if (b != plan.against || !opt.oracle_excluded) plan.subjects.push_back(b);
    }
  } else {
    if (opt.backends.empty()) throw std::invalid_argument("fuzz: --backend is required (a name from `oplab backends`, or all)");
    for (const auto& name : opt.backends) {
      Backend* b = reg.find(name);
      if (!b) throw std::invalid_argument("fuzz: unknown backend \"" + name + "\" (see `oplab backends`)");
      if (auto why = b->unavailable_reason()) throw BackendUnavailable("fuzz: backend " + name + " cannot run here: " + *why);
      plan.subjects.push_back(b);
    }
  }
  if (is_all(opt.properties)) {
    for (const Property& p : all_properties()) plan.properties.push_back(&p);
  } else {
    for (const auto& name : opt.properties) {
      const Property* p = find_property(name);
      if (!p) {
        std::vector<std::string> names;
        for (const Property& q : all_properties()) names.push_back(q.name);
        throw std::invalid_argument("fuzz: unknown property \"" + name + "\" (known: " + joined(names) + ", or all)");
      }
      plan.properties.push_back(p);
    }
  }
  if (!opt.cases && !opt.time_s) throw std::invalid_argument("fuzz: give --cases N or --time S (or both)");
  return plan;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

class Runner {
 public:
  Runner(const CampaignOptions& opt, const Plan& plan, std::ostream& os)
      : opt_(opt), plan_(plan), log_(opt.out), progress_(os, opt.live_progress, opt.progress_every_s),
        t0_(clock_type::now()), started_(utc_now()) {}

  CampaignResult run() {
    log_.event({{"event", "start"}, {"time", started_}, {"options", options_json()}}, true);
    write_summary("running");
    try {
      loop();
    } catch (const Interrupted&) {
      result_.interrupted = true;
    } catch (const std::exception& e) {
      // The campaign itself broke (a full disk, a bug): say so in the summary, then report it.
      log_.event({{"event", "end"}, {"status", "error"}, {"error", e.what()}, {"elapsed_s", elapsed()}}, true);
      write_summary(std::string("error: ") + e.what());
      throw;
    }
    if (stop_requested()) result_.interrupted = true;
    const std::string status = result_.interrupted ? "interrupted" : "finished";
    result_.seconds = elapsed();
    result_.shrink_seconds = shrink_s_;
    log_.event({{"event", "end"}, {"status", status}, {"elapsed_s", elapsed()}, {"cases", result_.cases},
                {"failures", result_.failures.size()}},
               true);
    write_summary(status);
    progress_.finish(snapshot());
    return result_;
  }

 private:
  double elapsed() const { return since(t0_); }
  static double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }
  // Time spent shrinking so far, the shrink under way included.
  double shrink_seconds() const { return shrink_s_ + (shrink_started_ ? since(*shrink_started_) : 0.0); }
  bool time_up() const { return opt_.time_s && elapsed() >= *opt_.time_s; }
  bool done() const { return !opt_.keep_going && !result_.failures.empty(); }

  void loop() {
    for (uint64_t i = 0;; ++i) {
      if (opt_.cases && int64_t(i) >= *opt_.cases) return;
      if (time_up() || done()) return;
      if (stop_requested()) throw Interrupted();
      if (!opt_.shard.owns(i)) continue;
      for (const std::string& op : plan_.ops) {
        if (time_up() || done()) return;
        run_case(op, i);
      }
    }
  }

  const rc::Gen<Case>& generator(const std::string& op, bool invalid) {
    auto& table = invalid ? invalid_gens_ : valid_gens_;
    auto it = table.find(op);
    if (it == table.end()) it = table.emplace(op, invalid ? gen_invalid_case(op) : gen_case(op)).first;
    return it->second;
  }

  void run_case(const std::string& op, uint64_t index) {
    const uint64_t seed = case_seed(opt_.seed, op, index);
    const int size = case_size(seed);
    std::optional<Case> drawn[2];  // valid, invalid: drawn when a property first needs one
    // A valid case over the resource policy (an edge-aimed generator can draw a roi whose
    // adaptive grid is millions of samples): every backend refuses it alike, so it is skipped,
    // never an ERROR of each backend.
    std::optional<std::string> over_policy;
    ++result_.cases;
    ++per_op_[op];
    // The oracle's answers on this case, asked once for all subjects (fuzz/properties.h).
    SharedAnswers oracle_answers[2] = {SharedAnswers(*plan_.against), SharedAnswers(*plan_.against)};
    // Draws the valid (k = 0) or invalid (k = 1) case; false on a generator error, logged when
    // `log` (the property loop logs it; the prefetch below leaves it to the loop).
    auto draw = [&](int k, bool log) {
      const auto t = clock_type::now();
      struct AddTime {  // on every way out, the return on a generator error included
        double& to;
        clock_type::time_point from;
        ~AddTime() { to += since(from); }
      } add_time{draw_s_, t};
      try {
        if (predrawn_.op == op && predrawn_.index == index && predrawn_.cases[k]) {
          drawn[k] = std::move(*predrawn_.cases[k]);  // drawn while the workers evaluated the case before
          predrawn_.cases[k].reset();
        } else {
          drawn[k] = draw_case(generator(op, k == 1), seed, size);
        }
      } catch (const std::exception& e) {
        if (log) log_.event({{"event", "generator-error"}, {"op", op}, {"case_index", index}, {"error", e.what()}});
        return false;
      }
      if (k == 0) {
        try {
          (void)op_desc(op).parse(*drawn[0]);
        } catch (const OverResourceLimit& e) {
          over_policy = std::string("over the resource policy: ") + e.what();
          log_.event({{"event", "over-resource-policy"}, {"op", op}, {"case_index", index}, {"error", e.what()}});
        } catch (const std::exception&) {
          // any other refusal is the properties' to judge (a generator bug is a finding)
        }
      }
      return true;
    };
    std::vector<std::array<std::optional<CheckContext>, 2>> contexts(plan_.subjects.size());
    prefetch_case(op, index, contexts, oracle_answers, drawn, over_policy, draw);
    for (size_t si = 0; si < plan_.subjects.size(); ++si) {
      Backend* b = plan_.subjects[si];
      std::array<std::optional<CheckContext>, 2>& ctx = contexts[si];
      for (const Property* p : plan_.properties) {
        if (!p->applies(op)) continue;
        const int k = p->invalid_cases ? 1 : 0;
        if (!drawn[k] && !draw(k, true)) return;
        if (k == 0 && over_policy) {
          tally(*b, op, *p, CheckResult::skip(*over_policy), 0);
          continue;
        }
        if (!ctx[k]) ctx[k].emplace(*drawn[k], *b, *plan_.against, opt_.isolation, &oracle_answers[k]);
        const auto t = clock_type::now();
        const CheckResult r = run_check(*p, *ctx[k]);
        const double secs = since(t);
        judge_s_ += secs;
        tally(*b, op, *p, r, secs);
        if (r.failed()) {
          const auto tf = clock_type::now();
          const double shrunk_before = shrink_s_;
          record_failure(op, index, seed, size, *b, *p, *drawn[k], r);
          record_s_ += since(tf) - (shrink_s_ - shrunk_before);
          break;  // one failure per case and backend: the rest would repeat it
        }
      }
      progress_.update(snapshot());
      periodic();
    }
  }

  // Every evaluation the properties will ask of this case, on every subject, sent ahead: one
  // batch per backend's worker, all sent before any answer is awaited (fuzz/prefetch.h). The
  // checks then find the answers kept, and judge exactly as if they had asked them one by one.
  template <class Draw>
  void prefetch_case(const std::string& op, uint64_t index,
                     std::vector<std::array<std::optional<CheckContext>, 2>>& contexts,
                     SharedAnswers (&oracle_answers)[2], std::optional<Case> (&drawn)[2],
                     const std::optional<std::string>& over_policy, Draw& draw) {
    if (!opt_.batch || opt_.isolation.mode == IsolationMode::None) return;
    const auto t = clock_type::now();
    const double drawing_before = draw_s_;  // drawing is a phase of its own
    std::vector<std::pair<CheckContext*, Ask>> asks;
    [&] {
      for (size_t si = 0; si < plan_.subjects.size(); ++si) {
        for (const Property* p : plan_.properties) {
          if (!p->applies(op)) continue;
          const int k = p->invalid_cases ? 1 : 0;
          // A generator error: the property loop meets it (and logs it) in its own order.
          if (!drawn[k] && !draw(k, false)) return;
          if (k == 0 && over_policy) continue;
          auto& ctx = contexts[si][k];
          if (!ctx) ctx.emplace(*drawn[k], *plan_.subjects[si], *plan_.against, opt_.isolation, &oracle_answers[k]);
          collect_asks(*p, *ctx, asks);
        }
      }
    }();
    prefetch(asks, [&] {
      const auto t_draw = clock_type::now();
      predraw_after(op, index);
      draw_s_ += since(t_draw);
    });
    judge_s_ += since(t) - (draw_s_ - drawing_before);
  }

  // The case the loop starts after (op, index), if there is one: the next op of the same index,
  // or the first op of the next index this shard owns.
  std::optional<std::pair<std::string, uint64_t>> next_case(const std::string& op, uint64_t index) const {
    const auto it = std::find(plan_.ops.begin(), plan_.ops.end(), op);
    if (it == plan_.ops.end()) return std::nullopt;
    if (it + 1 != plan_.ops.end()) return std::make_pair(*(it + 1), index);
    uint64_t next = index + 1;
    while (!opt_.shard.owns(next)) ++next;
    if (opt_.cases && int64_t(next) >= *opt_.cases) return std::nullopt;
    return std::make_pair(plan_.ops.front(), next);
  }

  // Draws the next case ahead (the draws depend on (seed, op, index) alone, so a case drawn
  // early is the case drawn on time). A generator error is left for the case's own turn, which
  // logs it; nothing here may throw.
  void predraw_after(const std::string& op, uint64_t index) {
    const auto next = next_case(op, index);
    predrawn_ = Predrawn{};
    if (!next) return;
    predrawn_.op = next->first;
    predrawn_.index = next->second;
    const uint64_t seed = case_seed(opt_.seed, next->first, next->second);
    const int size = case_size(seed);
    for (int k : {0, 1}) {
      bool needed = false;
      for (const Property* p : plan_.properties) needed |= p->applies(next->first) && p->invalid_cases == (k == 1);
      if (!needed) continue;
      try {
        predrawn_.cases[k] = draw_case(generator(next->first, k == 1), seed, size);
      } catch (...) {
      }
    }
  }

  void tally(const Backend& b, const std::string& op, const Property& p, const CheckResult& r, double secs) {
    ++result_.checks;
    records_.at(op, b, p, plan_.against->name()).add(r, secs);
    if (r.verdict == Verdict::Skipped || r.verdict == Verdict::Unsupported) {
      auto& reasons = skips_[p.name];
      const std::string why = r.detail.substr(0, 100);
      if (reasons.count(why) || reasons.size() < 20) ++reasons[why];
    }
  }

  void record_failure(const std::string& op, uint64_t index, uint64_t seed, int size, Backend& b, const Property& p,
                      const Case& original, const CheckResult& r) {
    const double found = elapsed();
    const std::string id =
        safe_id(op + "-" + b.name() + "-" + p.name + "-s" + std::to_string(opt_.seed) + "-i" + std::to_string(index));
    json record = {{"kind", "oplab-fuzz-failure"},
                   {"version", 1},
                   {"id", id},
                   {"campaign_seed", opt_.seed},
                   {"shard", opt_.shard.str()},
                   {"case_index", index},
                   {"case_seed", seed},
                   {"size", size},
                   {"op", op},
                   {"backend", b.name()},
                   {"backend_origin", b.origin()},  // what ran: "exec: COMMAND", "plugin: PATH", "" built in
                   {"dtype", dtype_name(b.dtype(op))},
                   {"against", plan_.against->name()},
                   {"property", p.name},
                   {"property_description", p.description},
                   {"detail", r.detail},
                   {"crashed", r.crashed},
                   {"metrics", r.metrics},
                   {"found_after_s", found},
                   {"found_after_cases", result_.cases},
                   {"shrunk", false},
                   {"case", case_to_json(original)},
                   {"replay", replay_command(log_.record_path(id), b.name(), b.origin())}};
    const bool shrinking = opt_.shrink_time_s > 0;
    // Saved before shrinking: if the campaign dies while shrinking, the failure is on disk
    // (and listed by `report` and `merge`, fuzz/campaign_state.h). Without shrinking,
    // finish_failure saves it at once.
    if (shrinking) log_.save_failure(id, record, original);
    log_.event({{"event", "failure-found"}, {"id", id}, {"op", op}, {"backend", b.name()}, {"property", p.name},
                {"detail", r.detail}, {"crashed", r.crashed}, {"found_after_s", found}},
               shrinking);  // unshrunk, its "failure" event follows at once, durable
    const bool loud = !opt_.quiet_expected_failures || b.role() == BackendRole::Implementation;
    if (loud)
      progress_.message(std::string(compare::verdict_name(r.verdict)) + " " + p.name + " " + op + " on " + b.name() +
                        ": " + r.detail);
    result_.failures.push_back(summary_of(record, found));
    if (!shrinking) {  // no shrinking asked: the case as drawn is the record
      record["shrink_state"] = "not shrunk (shrink time 0)";
      record["shrink"] = {{"skipped", "no shrinking asked (shrink time 0)"}, {"seconds", 0.0}};
      finish_failure(record, original, loud);
      return;
    }
    summary_after_failure(loud);

    // Shrink: the same property, on the same backends, on RapidCheck's smaller candidates.
    phase_ = "shrinking " + id;
    CheckResult last = r;
    const std::string kind = failure_kind(r);
    bool interrupted = false;
    auto fails = [&](const Case& c) {
      if (interrupted) return false;
      try {
        CheckContext ctx(c, b, *plan_.against, opt_.isolation);
        CheckResult x = run_check(p, ctx);
        progress_.update(snapshot());
        periodic();  // the heartbeat goes on while shrinking
        if (!x.failed() || failure_kind(x) != kind) return false;
        last = std::move(x);
        return true;
      } catch (const Interrupted&) {
        interrupted = true;  // wind the shrink down; the best so far is kept below
        return false;
      }
    };
    shrink_started_ = clock_type::now();
    const ShrinkOutcome s = shrink_case(property_gen(p, op), seed, size, fails, opt_.shrink_time_s);
    shrink_s_ += since(*shrink_started_);
    shrink_started_.reset();
    phase_.clear();
    if (s.reproduced) {
      record["case"] = case_to_json(s.minimal);
      record["original_case"] = case_to_json(original);
      record["detail"] = last.detail;
      record["crashed"] = last.crashed;
      record["metrics"] = last.metrics;
    }
    // Shrunk means the shrinker ran to its end: one stopped by Ctrl-C kept its best so far.
    record["shrunk"] = s.reproduced && !interrupted;
    record["shrink_state"] = !s.reproduced ? "not shrunk (the regenerated case did not fail the same way)"
                             : interrupted ? "partly shrunk (interrupted)"
                                           : "shrunk";
    record["shrink"] = {{"reproduced", s.reproduced}, {"accepted", s.accepted}, {"tried", s.tried},
                        {"seconds", s.seconds}, {"budget_exhausted", s.budget_exhausted}, {"interrupted", interrupted}};
    if (loud)
      progress_.message("  " + record["shrink_state"].get<std::string>() + " (" + std::to_string(s.accepted) +
                        " shrinks, " + std::to_string(s.tried) + " tried): " + record["case"].dump() + "\n  " +
                        record["detail"].get<std::string>());
    finish_failure(record, s.reproduced ? s.minimal : original, loud);
    if (interrupted) throw Interrupted();
  }

  FailureSummary summary_of(const json& record, double found) const {
    const std::string id = record["id"];
    FailureSummary f;
    f.id = id, f.op = record["op"], f.backend = record["backend"], f.property = record["property"];
    f.detail = record["detail"];
    f.record_path = log_.record_path(id), f.case_path = log_.case_path(id);
    f.minimal_case = record["case"];
    f.found_after_s = found, f.shrunk = record["shrunk"];
    f.found_after_cases = record["found_after_cases"];
    return f;
  }

  // The failure's final record (the last of result_.failures): a failure already recorded
  // with the same signature (op, backend, property, minimal case) is the same bug met again,
  // so it is counted on the first record and this one's files are removed; otherwise its
  // record is saved, logged and kept.
  void finish_failure(json& record, const Case& minimal, bool loud) {
    FailureSummary f = summary_of(record, result_.failures.back().found_after_s);
    f.shrink_s = record["shrink"].value("seconds", 0.0);
    const std::string signature =
        f.op + "|" + f.backend + "|" + f.property + "|" + record["case"].dump();
    result_.failures.pop_back();
    if (auto it = signatures_.find(signature); it != signatures_.end()) {
      FailureSummary& first = result_.failures[it->second];
      ++first.occurrences;
      json& first_record = records_json_[it->second];
      first_record["occurrences"] = first.occurrences;
      first_record["same_failure_ids"].push_back(f.id);
      log_.save_failure(first.id, first_record, case_from_json(first_record.at("case")));
      std::error_code ec;
      std::filesystem::remove(f.record_path, ec);
      std::filesystem::remove(f.case_path, ec);
      log_.event({{"event", "failure-repeated"}, {"id", f.id}, {"same_as", first.id}}, true);
      if (loud) progress_.message("  the same failure as " + first.id + " (met " + std::to_string(first.occurrences) + " times)");
      summary_after_failure(loud);
      return;
    }
    record["occurrences"] = 1;
    record["same_failure_ids"] = json::array();
    log_.save_failure(f.id, record, minimal);
    json ev = record;
    ev.erase("original_case");
    ev["event"] = "failure";
    log_.event(ev, true);
    signatures_[signature] = result_.failures.size();
    result_.failures.push_back(f);
    records_json_.push_back(record);
    if (loud) progress_.message("  replay: " + record.value("replay", std::string()));
    summary_after_failure(loud);
  }

  // A failure is on disk (its files, its durable event) before the summary lists it. An
  // implementation's failure (or any, on the backends named) is in the summary at once; the
  // expected failures of seeded bugs and study variants under --backend all, which come every
  // few cases, at the next periodic write, within 2 s: rewriting the whole summary for each
  // (hundreds of records) took more time than judging the cases.
  void summary_after_failure(bool loud) {
    if (loud) write_summary("running");
    else periodic();
  }

  void periodic() {
    const double now = elapsed();
    if (now - last_summary_ >= 2.0) write_summary("running");
    if (now - last_event_ >= opt_.progress_every_s) {
      log_.event({{"event", "progress"}, {"elapsed_s", now}, {"cases", result_.cases}, {"per_op", per_op_},
                  {"checks", result_.checks}, {"failures", result_.failures.size()}});
      last_event_ = now;
    }
  }

  ProgressSnapshot snapshot() const {
    ProgressSnapshot s;
    s.elapsed_s = elapsed();
    s.cases = result_.cases;
    s.per_op = per_op_;
    s.checks = result_.checks;
    s.failures = int64_t(result_.failures.size());
    s.phase = phase_;
    s.shrink_s = shrink_seconds();
    return s;
  }

  json options_json() const {
    std::vector<std::string> subjects, props;
    for (Backend* b : plan_.subjects) subjects.push_back(b->name());
    for (const Property* p : plan_.properties) props.push_back(p->name);
    json o = {{"mode", opt_.mode},
              {"ops", plan_.ops},
              {"backends", subjects},
              {"against", plan_.against->name()},
              {"properties", props},
              {"seed", opt_.seed},
              {"shard", opt_.shard.str()},
              {"keep_going", opt_.keep_going},
              {"isolation", isolation_mode_name(opt_.isolation.mode)},
              {"batch", opt_.batch},
              {"timeout_s", opt_.isolation.timeout_s},
              {"shrink_time_s", opt_.shrink_time_s}};
    json roles = json::object();  // so that a report can tell caught seeded bugs from findings
    json origins = json::object();  // external backends: what ran, so that a replay can say so
    for (Backend* b : plan_.subjects) {
      roles[b->name()] = backend_role_name(b->role());
      if (!b->origin().empty()) origins[b->name()] = b->origin();
    }
    o["backend_roles"] = roles;
    o["backend_origins"] = origins;
    o["cases"] = opt_.cases ? json(*opt_.cases) : json(nullptr);
    o["time_s"] = opt_.time_s ? json(*opt_.time_s) : json(nullptr);
    return o;
  }

  void write_summary(const std::string& status) {
    const auto t = clock_type::now();
    json failures = json::array();
    for (const auto& f : result_.failures)
      failures.push_back({{"id", f.id}, {"op", f.op}, {"backend", f.backend}, {"property", f.property},
                          {"detail", f.detail}, {"record", f.record_path}, {"case", f.case_path},
                          {"found_after_s", f.found_after_s}, {"shrunk", f.shrunk}, {"occurrences", f.occurrences}});
    const double secs = elapsed(), shrink = shrink_seconds();
    result_.summary = {{"kind", "oplab-fuzz-campaign"},
                       {"version", 2},
                       {"status", status},
                       {"heartbeat", heartbeat()},
                       {"started", started_},
                       {"elapsed_s", secs},
                       {"options", options_json()},
                       {"cases", {{"total", result_.cases}, {"per_op", per_op_}}},
                       {"cases_per_second", fuzz_rate(result_.cases, secs, shrink)},
                       {"shrink_seconds", shrink},
                       {"shrink_share", shrink_share(secs, shrink)},
                       {"seconds_by_phase", {{"judging", judge_s_}, {"drawing", draw_s_}, {"shrinking", shrink},
                                             {"recording_failures", record_s_}, {"writing_summary", write_s_}}},
                       {"checks_total", result_.checks},
                       {"records", records_.to_json()},
                       {"findings", records_.findings()},
                       {"unavailable_backends", plan_.unavailable},
                       {"skip_reasons", skips_},
                       {"failures", failures}};
    log_.write_summary(result_.summary);
    write_s_ += since(t);
    last_summary_ = elapsed();
  }

  const CampaignOptions& opt_;
  const Plan& plan_;
  CampaignLog log_;
  Progress progress_;
  clock_type::time_point t0_;
  std::string started_;
  CampaignResult result_;
  std::map<std::string, int64_t> per_op_;
  CampaignRecords records_;
  std::map<std::string, size_t> signatures_;  // failure signature -> index in result_.failures
  std::vector<json> records_json_;            // the record of each of result_.failures
  std::map<std::string, std::map<std::string, int64_t>> skips_;
  std::map<std::string, rc::Gen<Case>> valid_gens_, invalid_gens_;
  std::string phase_;
  double last_summary_ = 0, last_event_ = 0;
  // Where the time goes (summary.json "seconds_by_phase"): judging cases outside shrinking,
  // drawing them, shrinking failures, recording failures (their files and events, the summary
  // writes among them), writing the summary (all writes).
  double shrink_s_ = 0, judge_s_ = 0, draw_s_ = 0, record_s_ = 0, write_s_ = 0;
  std::optional<clock_type::time_point> shrink_started_;
  // The next case, drawn while the workers evaluated the one before it (predraw_after).
  struct Predrawn {
    std::string op;
    uint64_t index = 0;
    std::optional<Case> cases[2];
  } predrawn_;
};

}  // namespace

CampaignResult run_campaign(const CampaignOptions& opt, Registry& registry, std::ostream& progress) {
  const Plan plan = resolve(opt, registry);
  clear_stop();
  install_stop_handlers();
  struct Restore {
    ~Restore() { uninstall_stop_handlers(); }
  } restore;
  Runner runner(opt, plan, progress);
  return runner.run();
}

}  // namespace oplab::fuzz
