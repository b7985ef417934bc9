#pragma once
// What every check of one case needs to know: whose backward it checks, whose forward it
// differences, in which precision the backend computes, and the seed of its directions.
#include <string>

#include "core/backend.h"
#include "gradcheck/eval.h"
#include "gradcheck/random.h"
#include "gradcheck/record.h"

namespace oplab::gradcheck {

struct CheckContext {
  Backend* backend = nullptr;     // whose gradients are checked
  Backend* ref = nullptr;         // the double reference
  // Whose forward the finite differences take: the backend itself when it computes in double
  // (a backward must be the derivative of its own forward), the reference for a float32
  // backend (differences of a float32 forward are noise at any useful step).
  Backend* fd_forward = nullptr;
  Precision precision = Precision::F64;
  uint64_t seed = 1;
  int64_t case_index = -1;

  CheckRecord record(const Case& c, const std::string& input, const std::string& method) const {
    CheckRecord r;
    r.op = c.op;
    r.backend = backend->name();
    r.input = input;
    r.method = method;
    r.case_index = case_index;
    return r;
  }
  // Directions of one check, independent of every other check's.
  Rng rng(const Case& c, const std::string& purpose) const {
    return Rng::derive(seed, c.op + "/" + std::to_string(case_index) + "/" + purpose);
  }
};

}  // namespace oplab::gradcheck
