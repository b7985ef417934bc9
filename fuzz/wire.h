#pragma once
// The bytes a forked evaluation sends back to the campaign (fuzz/isolate.h): either a Result
// or the exception the backend threw (its kind and message). Binary, because a result can
// hold millions of doubles and JSON would cost more than the evaluation itself.
#include <string>
#include <vector>

#include "core/case.h"

namespace oplab::fuzz::wire {

enum class Kind : unsigned char { Ok = 0, InvalidCase, Unsupported, Unavailable, FormatError, Error };

std::string encode_result(const Result& r);
std::string encode_error(Kind kind, const std::string& message);

// A case, as the campaign sends it to a backend's worker (fuzz/worker.h): the tensors' doubles
// as their bits and the params as CBOR, so that every double (NaN and ±Inf included) arrives
// exactly and nothing is printed and parsed as text on either side.
std::string encode_case(const Case& c);
Case decode_case(const std::string& bytes);  // std::runtime_error when truncated or malformed

// Several messages as one frame (a worker's batch, fuzz/worker.h): a count, then each one's
// length and bytes. A batch of cases carries a leading tag that no single case starts with, so
// a worker tells the two apart; the answers come back as a plain list, in the same order.
std::string encode_list(const std::vector<std::string>& items, bool tagged = false);
bool is_tagged_list(const std::string& bytes);
std::vector<std::string> decode_list(const std::string& bytes, bool tagged = false);  // std::runtime_error when malformed

// Decodes a message; returns the Result, or throws the exception it carries (same type as the
// child's). Throws std::runtime_error when the bytes are truncated or malformed.
Result decode(const std::string& bytes);

}  // namespace oplab::fuzz::wire
