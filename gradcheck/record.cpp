#include "gradcheck/record.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <tuple>

namespace oplab::gradcheck {

namespace {
// JSON has no Inf: a non-finite error is written as a string, as tensors do (SPEC §1).
json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
}  // namespace

json record_to_json(const CheckRecord& r) {
  json j{{"op", r.op},         {"backend", r.backend}, {"input", r.input},       {"method", r.method},
         {"case", r.case_index}, {"verdict", compare::verdict_name(r.verdict)}, {"error", number(r.error)}, {"tolerance", number(r.tolerance)},
         {"elements", r.elements}, {"moved", r.moved},   {"shrunk", r.shrunk},     {"skipped", r.skipped}};
  if (!r.detail.empty()) j["detail"] = r.detail;
  if (!r.extra.empty()) j["extra"] = r.extra;
  return j;
}

std::vector<SummaryRow> summarize(const std::vector<CheckRecord>& records) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, SummaryRow> rows;
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> order;
  for (const CheckRecord& r : records) {
    const auto key = std::make_tuple(r.op, r.backend, r.input, r.method);
    auto [it, fresh] = rows.try_emplace(key);
    SummaryRow& s = it->second;
    if (fresh) {
      s.op = r.op, s.backend = r.backend, s.input = r.input, s.method = r.method;
      order.push_back(key);
    }
    ++s.checks;
    ++s.verdicts[compare::verdict_name(r.verdict)];
    s.elements += r.elements;
    s.moved += r.moved, s.shrunk += r.shrunk, s.skipped += r.skipped;
    if (r.verdict == Verdict::Agree || r.verdict == Verdict::Disagree) {
      s.worst = std::max(s.worst, r.error);
      s.tolerance = std::max(s.tolerance, r.tolerance);
    }
  }
  std::vector<SummaryRow> out;
  for (const auto& k : order) out.push_back(rows.at(k));
  return out;
}

std::vector<SideRow> summarize_sides(const std::vector<CheckRecord>& records) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, SideRow> rows;
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> order;
  for (const CheckRecord& r : records) {
    if (r.method != "one-sided" || !r.extra.contains("kink")) continue;
    const auto key = std::make_tuple(r.op, r.backend, r.input, r.extra["kink"].get<std::string>());
    auto [it, fresh] = rows.try_emplace(key);
    SideRow& s = it->second;
    if (fresh) {
      s.op = r.op, s.backend = r.backend, s.input = r.input, s.kink = std::get<3>(key);
      order.push_back(key);
    }
    for (const auto& [side, n] : r.extra["sides"].items()) s.sides[side] += n.get<int64_t>();
    s.jumps += r.extra.value("jumps", int64_t(0));
  }
  std::vector<SideRow> out;
  for (const auto& k : order) out.push_back(rows.at(k));
  return out;
}

json summary_to_json(const std::vector<SummaryRow>& rows) {
  json a = json::array();
  for (const auto& s : rows)
    a.push_back({{"op", s.op}, {"backend", s.backend}, {"input", s.input}, {"method", s.method}, {"checks", s.checks},
                 {"verdicts", s.verdicts}, {"elements", s.elements}, {"worst_error", number(s.worst)},
                 {"tolerance", number(s.tolerance)}, {"moved", s.moved}, {"shrunk", s.shrunk}, {"skipped", s.skipped}});
  return a;
}

json sides_to_json(const std::vector<SideRow>& rows) {
  json a = json::array();
  for (const auto& s : rows)
    a.push_back({{"op", s.op}, {"backend", s.backend}, {"input", s.input}, {"kink", s.kink}, {"sides", s.sides},
                 {"jumps", s.jumps}});
  return a;
}

// A text column as wide as its widest entry (at least `least`), plus a space: input names
// (sampling_locations) and compound kink names outgrow any fixed width.
template <typename Rows, typename Get>
int column_width(const Rows& rows, int least, Get get) {
  size_t w = size_t(least - 1);
  for (const auto& r : rows) w = std::max(w, get(r).size());
  return int(w + 1);
}

void print_summary(std::ostream& os, const std::vector<SummaryRow>& rows) {
  const int bw = column_width(rows, 26, [](const SummaryRow& r) { return r.backend; });
  const int iw = column_width(rows, 8, [](const SummaryRow& r) { return r.input; });
  os << std::left << std::setw(16) << "op" << std::setw(bw) << "backend" << std::setw(iw) << "input" << std::setw(16)
     << "method" << std::right << std::setw(7) << "checks" << std::setw(6) << "agree" << std::setw(6) << "fail"
     << std::setw(7) << "other" << std::setw(11) << "worst" << std::setw(9) << "tol" << std::setw(7) << "moved"
     << std::setw(7) << "shrunk" << std::setw(10) << "kink-skip" << '\n';
  for (const auto& s : rows) {
    const int64_t pass = s.count(Verdict::Agree), fail = s.failures();
    os << std::left << std::setw(16) << s.op << std::setw(bw) << s.backend << std::setw(iw) << s.input << std::setw(16)
       << s.method << std::right << std::setw(7) << s.checks << std::setw(6) << pass << std::setw(6) << fail
       << std::setw(7) << s.checks - pass - fail << std::setw(11) << std::setprecision(2) << s.worst << std::setw(9)
       << std::setprecision(1) << s.tolerance << std::setw(7) << s.moved << std::setw(7) << s.shrunk << std::setw(10)
       << s.skipped << '\n';
    for (const auto& [v, n] : s.verdicts)
      if (v != "agree" && v != "DISAGREE" && v != "ERROR") os << "    other: " << v << " " << n << '\n';
  }
  os << "(agree / fail: checks within / beyond their tolerance, or that errored; other: checks with another "
        "verdict, listed under the row;\n worst, tol: the method's normalised error and its tolerance (relative "
        "for fd and vs-ref, error / float32 bound for float backends, exact 0 for shapes and zero-grad);\n moved, "
        "shrunk, kink-skip: finite-difference points moved off a kink, steps shrunk to stay in one piece, points "
        "that could not be cleared)\n";
}

void print_sides(std::ostream& os, const std::vector<SideRow>& rows) {
  if (rows.empty()) return;
  const int bw = column_width(rows, 26, [](const SideRow& r) { return r.backend; });
  const int iw = column_width(rows, 8, [](const SideRow& r) { return r.input; });
  const int kw = column_width(rows, 22, [](const SideRow& r) { return r.kink; });
  os << "\nOne-sided derivatives at kinks: which side each backend's gradient equals\n"
     << std::left << std::setw(16) << "op" << std::setw(bw) << "backend" << std::setw(iw) << "input" << std::setw(kw)
     << "kink" << std::right << std::setw(7) << "right" << std::setw(7) << "left" << std::setw(7) << "both"
     << std::setw(9) << "neither" << std::setw(7) << "jumps" << '\n';
  for (const auto& s : rows) {
    auto get = [&](const char* k) { auto it = s.sides.find(k); return it == s.sides.end() ? int64_t(0) : it->second; };
    os << std::left << std::setw(16) << s.op << std::setw(bw) << s.backend << std::setw(iw) << s.input << std::setw(kw)
       << s.kink << std::right << std::setw(7) << get("right") << std::setw(7) << get("left") << std::setw(7)
       << get("both") << std::setw(9) << get("neither") << std::setw(7) << s.jumps << '\n';
  }
}

}  // namespace oplab::gradcheck
