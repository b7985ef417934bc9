#pragma once
// Runs one fuzz property on one case in this process, the subject judged against the reference,
// for tests of a property's own rules.
#include <gtest/gtest.h>

#include <string>

#include "fuzz/properties.h"
#include "reference/ref_backend.h"

namespace oplab {

inline fuzz::CheckResult run_property(const std::string& name, Backend& subject, const Case& c) {
  const fuzz::Property* p = fuzz::find_property(name);
  EXPECT_NE(p, nullptr) << name;
  if (!p) return fuzz::CheckResult::fail("no property " + name);
  auto ref = make_ref_backend();
  const fuzz::Isolation in_process{fuzz::IsolationMode::None, 10};
  fuzz::CheckContext ctx(c, subject, *ref, in_process);
  return fuzz::run_check(*p, ctx);
}

}  // namespace oplab
