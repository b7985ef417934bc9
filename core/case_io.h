#pragma once
// JSON form of tensors, cases and results (SPEC §1). Doubles round-trip exactly
// (shortest representation that reads back to the same bits); NaN and ±Inf are the
// strings "nan", "inf", "-inf".
#include <istream>
#include <string>

#include "core/case.h"

namespace oplab {

json tensor_to_json(const Tensor& t);
Tensor tensor_from_json(const json& j, const std::string& what);  // what: "inputs.rois", for errors

json case_to_json(const Case& c);
Case case_from_json(const json& j);

json result_to_json(const Result& r);
Result result_from_json(const json& j);

// Parses JSON text as every case, record and summary is read (docs/semantics.md, "Resource
// policy and hostile input"): nesting deeper than kMaxJsonDepth levels, a key repeated within
// an object, or a number beyond double (1e400) is a FormatError, as is any syntax or read
// error; every message is one line that starts with `where`.
inline constexpr int kMaxJsonDepth = 64;
json parse_json_strict(std::istream& in, const std::string& where);
json parse_json_strict(const std::string& text, const std::string& where);

// parse_json_strict of a file; a path that is missing, a directory, or larger than the
// resource limit file_bytes (core/limits.h) is a FormatError naming it.
json read_json_file(const std::string& path);
// Both write to a temporary beside the target (PATH.tmp) and rename it onto PATH: a reader never
// sees a partial file.
void write_text_file_atomic(const std::string& path, const std::string& text);
void write_json_file_atomic(const std::string& path, const json& j, int indent = -1);

}  // namespace oplab
