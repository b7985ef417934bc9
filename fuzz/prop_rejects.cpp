// rejects: every backend refuses an invalid case (one rule of SPEC §7 broken, see
// fuzz/gen_invalid.cpp) with the same one-line error as the oracle, naming the op first, and
// without crashing. A mutation that happens to leave the case valid is a skip.
#include "fuzz/properties.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

// What a backend answered: "" when it evaluated the case, else "<kind>: <message>".
std::string answer_of(CheckContext& ctx, Backend& b, std::string* invalid_message, bool* crashed) {
  try {
    ctx.eval(b, ctx.the_case());
    return "";
  } catch (const InvalidCase& e) {
    *invalid_message = e.what();
    return std::string("invalid: ") + e.what();
  } catch (const KernelCrash& e) {
    *crashed = true;
    return e.what();
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

CheckResult check(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  std::string want, got;
  bool crashed = false;
  const std::string oracle_answer = answer_of(ctx, ctx.against(), &want, &crashed);
  if (oracle_answer.empty()) return CheckResult::skip("the mutation left the case valid");
  if (want.empty()) {
    CheckResult r = CheckResult::fail(ctx.against().name() + " did not refuse the invalid case as invalid: " + oracle_answer);
    r.crashed = crashed;
    return r;
  }
  if (want.rfind(c.op + ": ", 0) != 0 || want.find('\n') != std::string::npos)
    return CheckResult::fail("the error is not one line starting with the op name: " + want);
  if (&ctx.subject() == &ctx.against()) return CheckResult::pass();
  const std::string subject_answer = answer_of(ctx, ctx.subject(), &got, &crashed);
  if (got == want) return CheckResult::pass();
  CheckResult r = CheckResult::fail(ctx.subject().name() + " answered \"" +
                                    (subject_answer.empty() ? "a result" : subject_answer) + "\" where " +
                                    ctx.against().name() + " refused with \"" + want + "\"");
  r.crashed = crashed;
  return r;
}

void asks(CheckContext& ctx, std::vector<Ask>& out) {
  out.push_back({&ctx.against(), ctx.the_case()});
  if (&ctx.subject() != &ctx.against()) out.push_back({&ctx.subject(), ctx.the_case()});
}

}  // namespace

Property rejects_property() {
  Property p{"rejects", "an invalid case is refused with the same one-line error by every backend", true, any_op, check};
  p.asks = asks;
  p.holds_for_uint8 = true;
  return p;
}

}  // namespace oplab::fuzz
