#include "external/protocol.h"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/case_io.h"

#ifndef OPLAB_VERSION_STRING
#define OPLAB_VERSION_STRING "unknown"
#endif

namespace oplab::protocol {

namespace {

[[noreturn]] void bad(const std::string& why) { throw std::invalid_argument(why); }

json parse_object(const std::string& line, const std::string& what) {
  json j;
  try {
    j = parse_json_strict(line, what);
  } catch (const FormatError&) {
    throw ProtocolError(what + " is not JSON: \"" + excerpt(line) + "\"");
  }
  if (!j.is_object()) throw ProtocolError(what + " is not a JSON object: \"" + excerpt(line) + "\"");
  return j;
}

DType dtype_of(const json& v, const std::string& where) {
  if (!v.is_string()) bad(where + " must be a string (float64, float32, float16 or bfloat16)");
  auto t = dtype_from_name(v.get<std::string>());
  if (!t) bad(where + " \"" + excerpt(v.get<std::string>(), 40) + "\" is not float64, float32, float16 or bfloat16");
  return *t;
}

void only_keys(const json& j, std::initializer_list<const char*> allowed, const std::string& where) {
  for (const auto& [k, v] : j.items())
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; }))
      bad(where + " has an unknown field \"" + excerpt(k, 40) + "\"");
}

}  // namespace

std::string excerpt(const std::string& line, size_t n) {
  std::string s;
  for (char ch : line.substr(0, n)) s += (static_cast<unsigned char>(ch) < 0x20) ? ' ' : ch;
  if (line.size() > n) s += "...";
  return s;
}

std::string hello_line() { return json{{"oplab", OPLAB_VERSION_STRING}, {"protocol", kVersion}}.dump(); }

Hello parse_hello(const std::string& line) {
  json j;
  try {
    j = parse_object(line, "its answer to hello");
  } catch (const ProtocolError& e) {
    bad(e.what());
  }
  if (j.contains("error") && j["error"].is_string() && j.value("kind", std::string()) == "unavailable")
    throw HelloRefused(excerpt(j["error"].get<std::string>(), 300));
  only_keys(j, {"protocol", "name", "description", "dtype", "accumulation", "ops", "versions"}, "its hello");
  if (!j.contains("protocol")) bad("its hello has no \"protocol\" (this harness speaks protocol 1)");
  if (!j["protocol"].is_number_integer() || j["protocol"].get<long long>() != kVersion)
    bad("its hello asks for protocol " + excerpt(j["protocol"].dump(), 20) + "; this harness speaks protocol 1");
  Hello h;
  if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty())
    bad("its hello has no \"name\" (a non-empty string)");
  h.name = j["name"].get<std::string>();
  if (j.contains("description")) {
    if (!j["description"].is_string()) bad("its hello's \"description\" must be a string");
    h.description = j["description"].get<std::string>();
  }
  if (j.contains("versions")) {
    if (!j["versions"].is_object()) bad("its hello's \"versions\" must be an object of strings");
    for (const auto& [k, v] : j["versions"].items()) {
      if (!v.is_string()) bad("its hello's versions." + excerpt(k, 40) + " must be a string");
      h.versions[k] = v.get<std::string>();
    }
  }
  if (!j.contains("dtype")) bad("its hello has no \"dtype\" (float64, float32, float16 or bfloat16)");
  h.dtype = dtype_of(j["dtype"], "its hello's \"dtype\"");
  // The accumulation type declared at the top level, if any: the default of the ops that do not
  // declare their own (without either: float32 for float16 and bfloat16, SPEC §15).
  std::optional<DType> top_acc;
  if (j.contains("accumulation")) top_acc = dtype_of(j["accumulation"], "its hello's \"accumulation\"");
  if (!j.contains("ops") || !j["ops"].is_object() || j["ops"].empty())
    bad("its hello has no \"ops\" (an object naming at least one op)");
  const std::vector<std::string> known = op_names();
  for (const auto& [op, decl] : j["ops"].items()) {
    if (std::find(known.begin(), known.end(), op) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      bad("its hello names an unknown op \"" + excerpt(op, 40) + "\" (known: " + list + ")");
    }
    const std::string where = "its hello's ops." + op;
    if (!decl.is_object()) bad(where + " must be an object ({} for the defaults)");
    only_keys(decl, {"dtype", "accumulation", "grads"}, where);
    OpDecl d;
    d.dtype = decl.contains("dtype") ? dtype_of(decl["dtype"], where + ".dtype") : h.dtype;
    d.accumulation = decl.contains("accumulation") ? dtype_of(decl["accumulation"], where + ".accumulation")
                                                   : top_acc.value_or(default_accumulation(d.dtype));
    if (decl.contains("grads")) {
      if (!decl["grads"].is_boolean()) bad(where + ".grads must be true or false");
      d.grads = decl["grads"].get<bool>();
    }
    h.ops[op] = d;
  }
  return h;
}

Result parse_answer(const std::string& line, const Case& sent, const Shape& output_shape) {
  const json j = parse_object(line, "its answer");
  if (j.contains("error")) {
    only_keys(j, {"error", "kind"}, "its error answer");
    if (!j["error"].is_string()) throw ProtocolError("its error answer's \"error\" is not a string");
    const std::string message = excerpt(j["error"].get<std::string>(), 300);
    const std::string kind = j.contains("kind") && j["kind"].is_string() ? j["kind"].get<std::string>() : "";
    if (kind == "unsupported") throw Unsupported(message);
    if (kind == "failed") throw std::runtime_error("failed: " + message);
    if (kind == "invalid") throw std::runtime_error("rejected a valid case as invalid: " + message);
    throw ProtocolError("its error answer has kind \"" + excerpt(kind, 30) + "\", not unsupported, invalid or failed");
  }
  try {
    only_keys(j, {"op", "backend", "outputs", "grads"}, "its answer");
  } catch (const std::invalid_argument& e) {
    throw ProtocolError(e.what());
  }
  if (j.contains("op") && j["op"] != json(sent.op))
    throw ProtocolError("it answered for op " + excerpt(j["op"].dump(), 40) + " to a case of " + sent.op);
  if (!j.contains("outputs") || !j["outputs"].is_object()) throw ProtocolError("its answer has no \"outputs\" object");
  if (j.contains("grads") && !j["grads"].is_object()) throw ProtocolError("its answer's \"grads\" is not an object");
  Result r;
  try {
    r = result_from_json(j);
  } catch (const FormatError& e) {
    throw ProtocolError(std::string("its answer has a malformed tensor: ") + e.what());
  }
  if (r.outputs.size() != 1 || !r.outputs.count("output"))
    throw ProtocolError("its answer's outputs must be exactly {\"output\": tensor}");
  if (r.outputs.at("output").shape != output_shape)
    throw ProtocolError("its output has shape " + shape_str(r.outputs.at("output").shape) + ", the case's is " +
                        shape_str(output_shape));
  const std::vector<std::string> want = sent.grad_output ? grad_inputs(sent) : std::vector<std::string>{};
  std::set<std::string> got;
  for (const auto& [name, t] : r.grads) got.insert(name);
  if (got != std::set<std::string>(want.begin(), want.end())) {
    std::string w, g;
    for (const auto& n : want) w += (w.empty() ? "" : ", ") + n;
    for (const auto& n : got) g += (g.empty() ? "" : ", ") + n;
    throw ProtocolError("its answer has " + std::to_string(got.size()) + " gradient(s) [" + g + "], the case needs " +
                        std::to_string(want.size()) + " [" + w + "]");
  }
  for (const auto& [name, t] : r.grads)
    if (t.shape != sent.in(name).shape)
      throw ProtocolError("its grads." + name + " has shape " + shape_str(t.shape) + ", the input's is " +
                          shape_str(sent.in(name).shape));
  r.op = sent.op;
  return r;
}

}  // namespace oplab::protocol
