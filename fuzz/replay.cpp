#include "fuzz/replay.h"

#include <stdexcept>

#include "core/case_io.h"

namespace oplab::fuzz {

namespace {

Backend& need_backend(Registry& reg, const std::string& name) {
  Backend* b = reg.find(name);
  if (!b) throw std::invalid_argument("replay: unknown backend \"" + name + "\" (see `oplab backends`)");
  if (auto why = b->unavailable_reason()) throw std::invalid_argument("replay: backend " + name + " cannot run here: " + *why);
  return *b;
}

}  // namespace

ReplayOutcome replay_file(const ReplayOptions& opt, Registry& reg) {
  ReplayOutcome out;
  const json j = read_json_file(opt.file);
  const bool is_record = j.is_object() && j.value("kind", std::string()) == "oplab-fuzz-failure";
  if (is_record) {
    if (!j.contains("case")) throw FormatError(opt.file + ": a failure record without its \"case\"");
    out.record = j;
    out.the_case = case_from_json(j.at("case"));
  } else {
    out.the_case = case_from_json(j);
  }

  std::vector<std::string> backends = opt.backends;
  if (backends.empty()) backends.push_back(is_record ? j.value("backend", std::string("ref")) : std::string("ref"));
  const std::string against = !opt.against.empty() ? opt.against : is_record ? j.value("against", std::string("ref")) : "ref";

  std::vector<const Property*> props;
  std::vector<std::string> names = opt.properties;
  if (names.empty() && is_record && j.contains("property")) names.push_back(j.at("property").get<std::string>());
  if (names.empty() || (names.size() == 1 && names[0] == "all")) {
    bool valid = true;
    try {
      validate_case(out.the_case);
    } catch (const InvalidCase&) {
      valid = false;
    }
    for (const Property& p : all_properties())
      if (p.invalid_cases == !valid && p.applies(out.the_case.op)) props.push_back(&p);
  } else {
    for (const auto& n : names) {
      const Property* p = find_property(n);
      if (!p) throw std::invalid_argument("replay: unknown property \"" + n + "\"");
      props.push_back(p);
    }
  }

  Backend& oracle = need_backend(reg, against);
  for (const auto& name : backends) {
    Backend& b = need_backend(reg, name);
    CheckContext ctx(out.the_case, b, oracle, opt.isolation);
    for (const Property* p : props) {
      if (!p->applies(out.the_case.op)) continue;
      CheckResult r = run_check(*p, ctx);
      out.still_fails |= r.failed();
      out.checks.push_back({b.name(), p->name, std::move(r)});
    }
  }
  return out;
}

}  // namespace oplab::fuzz
