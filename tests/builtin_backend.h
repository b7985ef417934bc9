#pragma once
// A built-in backend by name, for tests that judge the backends a user gets (cli/
// builtin_backends.h), and the skip of a test whose backend cannot run on this machine (a peer
// whose library is missing), with the backend's own reason.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "cli/builtin_backends.h"

namespace oplab::testing {

inline Backend& builtin_backend(const std::string& name) {
  Backend* b = builtin_backends().find(name);
  if (!b) throw std::runtime_error("no backend " + name);
  return *b;
}

}  // namespace oplab::testing

#define SKIP_UNLESS_AVAILABLE(b)                                   \
  do {                                                             \
    if (auto why = (b).unavailable_reason()) GTEST_SKIP() << *why; \
  } while (0)
