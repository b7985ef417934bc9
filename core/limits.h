#pragma once
// The resource policy (docs/semantics.md, "Resource policy and hostile input"): what one case
// may ask for, checked by every op's validation (core/ops/) after the rules of SPEC §7 and
// before any backend does work, so that a case of a few hundred bytes cannot make a backend
// allocate gigabytes or run for hours. Exceeding a limit is an InvalidCase whose one line
// names the limit and the value (`oplab eval` exits 2).
//
// The defaults admit every standard benchmark shape (bench/shapes_*.cpp) with room to spare.
// The environment variable OPLAB_LIMITS changes them, read once per process:
//   OPLAB_LIMITS=off                       no resource limit (the SPEC §7 rules still hold)
//   OPLAB_LIMITS=work=1e12,bin_samples=4e6  override some limits, keep the others
// A program may also switch the policy off or set the limits itself (set_limits_enforced,
// set_resource_limits), e.g. from a command-line flag.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/tensor.h"

namespace oplab {

struct ResourceLimits {
  // Largest tensor a case may ask for: any input, the output, a gradient, or a per-sample
  // table a kernel builds, in elements, a zero dim counting as 1 (a [0, 1, 2^20, 2^20] tensor
  // holds nothing but its strides and per-axis tables still span 2^40).
  int64_t tensor_elements = int64_t(1) << 26;  // 67,108,864 (512 MiB in double)
  // Largest single dimension of any tensor: bounds the per-axis tables (interpolate's taps).
  int64_t dim = int64_t(1) << 20;  // 1,048,576
  // Most samples one RoI bin may take (sampling grid gh x gw, fixed or adaptive).
  int64_t bin_samples = int64_t(1) << 20;  // 1,048,576 (a 1024 x 1024 grid)
  // Total work of one pass, in samples or multiply-adds (an estimate, see each op).
  double work = double(int64_t(1) << 35);  // about 3.4e10
  // Largest case (or any JSON) file read_json_file parses, in bytes.
  int64_t file_bytes = int64_t(1) << 32;  // 4 GiB
};

ResourceLimits default_resource_limits();

// The limits in force: the defaults, changed by OPLAB_LIMITS, then by set_resource_limits.
ResourceLimits resource_limits();
// Why OPLAB_LIMITS could not be read (one line), or empty. While it is set, every
// enforce_resource_limits throws InvalidCase and read_json_file FormatError with it.
std::optional<std::string> resource_limits_setting_error();
void set_resource_limits(const ResourceLimits& limits);

// Whether the policy is applied (default: yes, unless OPLAB_LIMITS=off).
bool limits_enforced();
void set_limits_enforced(bool on);

// What a validated case asks for. Each op's parse_* fills one and calls enforce().
struct ResourceUse {
  struct NamedShape {
    std::string what;  // "input", "output", "grad_output", "sample table"
    Shape shape;
  };
  std::vector<NamedShape> tensors;
  double bin_samples = 0;  // samples of the largest bin (RoI ops); 0 when not applicable
  std::string bin_what;    // how they arise, e.g. "sampling grid 1000x1000"
  double work = 0;         // total work of one pass
  std::string work_what;   // what was counted, e.g. "output elements x taps"
};

// A valid case (SPEC §7) that asks for more than the resource policy allows: an InvalidCase for
// every verb (exit 2), told apart where it matters (a fuzz campaign skips such a drawn case:
// it is no evidence about any backend, fuzz/campaign.cpp).
struct OverResourceLimit : InvalidCase {
  using InvalidCase::InvalidCase;
};

// Throws OverResourceLimit "<op>: <what> ... over the resource limit <name>=<value> (...)"
// when a limit is exceeded and the policy is enforced.
void enforce_resource_limits(const std::string& op, const ResourceUse& use);

// The product of the dims with each 0 counted as 1, saturating at INT64_MAX: the index span of
// a tensor's strides (what the int32 rule of SPEC §7 and the tensor limit measure).
int64_t shape_span(const Shape& shape);

}  // namespace oplab
