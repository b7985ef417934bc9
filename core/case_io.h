#pragma once
// JSON form of tensors, cases and results (SPEC §1). Doubles round-trip exactly
// (shortest representation that reads back to the same bits); NaN and ±Inf are the
// strings "nan", "inf", "-inf".
#include <string>

#include "core/case.h"

namespace oplab {

json tensor_to_json(const Tensor& t);
Tensor tensor_from_json(const json& j, const std::string& what);  // what: "inputs.rois", for errors

json case_to_json(const Case& c);
Case case_from_json(const json& j);

json result_to_json(const Result& r);
Result result_from_json(const json& j);

json read_json_file(const std::string& path);  // throws FormatError naming the file
// Writes to a temporary beside the target and renames it: never a partial file.
void write_json_file_atomic(const std::string& path, const json& j, int indent = -1);

}  // namespace oplab
