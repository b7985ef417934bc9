#include "core/case_io.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "core/echo.h"
#include "core/limits.h"

namespace oplab {

namespace {

json number_to_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double number_from_json(const json& v, const std::string& what, size_t i) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  throw FormatError(one_line(what + ".data[" + std::to_string(i) + "]=" + echo_json(v) +
                             " is not a number (or \"nan\", \"inf\", \"-inf\")"));
}

// The DOM parser of nlohmann::json with three rules of its own (docs/semantics.md, "Resource
// policy and hostile input"): nesting deeper than kMaxJsonDepth is an error (copying, printing
// or destroying a 70 000-deep value overflows the stack), a key repeated within one object is
// an error (JSON leaves it open; nlohmann keeps the last, so `"op": "x", "op": "roi_pool"`
// would run roi_pool), and every parse error is a one-line FormatError (a number like 1e400 is
// one: nlohmann reports it as out_of_range).
class StrictSax {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<json>;
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  StrictSax(json& root, std::string where) : dom_(root, true), where_(std::move(where)) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return dom_.number_float(v, s); }
  bool string(string_t& v) { return dom_.string(v); }
  bool binary(binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    enter();
    frames_.push_back(Frame{true, {}});
    return dom_.start_object(n);
  }
  bool key(string_t& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second)
      fail("the key \"" + echo(k) + "\" appears twice in one object (JSON keeps only one of them)");
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    enter();
    frames_.push_back(Frame{false, {}});
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    std::string msg = e.what();
    const size_t cut = msg.find("] ");
    if (msg.rfind("[json.exception.", 0) == 0 && cut != std::string::npos) msg = msg.substr(cut + 2);
    fail("not valid JSON (" + msg + ")");
  }

 private:
  struct Frame {
    bool object;
    std::unordered_set<std::string> keys;
  };
  void enter() {
    if (frames_.size() >= size_t(kMaxJsonDepth))
      fail("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  [[noreturn]] void fail(const std::string& msg) const { throw FormatError(one_line(where_ + ": " + msg)); }

  Dom dom_;
  std::string where_;
  std::vector<Frame> frames_;
};

}  // namespace

json tensor_to_json(const Tensor& t) {
  json data = json::array();
  for (double v : t.data) data.push_back(number_to_json(v));
  return json{{"shape", t.shape}, {"data", std::move(data)}};
}

Tensor tensor_from_json(const json& j, const std::string& what) {
  if (!j.is_object() || !j.contains("shape") || !j.contains("data"))
    throw FormatError(one_line(what + " must be an object with \"shape\" and \"data\""));
  const json& js = j.at("shape");
  const json& jd = j.at("data");
  if (!js.is_array()) throw FormatError(one_line(what + ".shape must be an array of integers"));
  if (!jd.is_array()) throw FormatError(one_line(what + ".data must be an array"));
  Tensor t;
  for (const json& d : js) {
    // An unsigned value above INT64_MAX would wrap to a negative int64: refused as well.
    if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > uint64_t(INT64_MAX)) ||
        d.get<int64_t>() < 0)
      throw FormatError(one_line(what + ".shape has " + echo_json(d) + ", not a non-negative integer"));
    t.shape.push_back(d.get<int64_t>());
  }
  int64_t n = 0;
  try {
    n = shape_numel(t.shape);
  } catch (const std::overflow_error&) {
    throw FormatError(one_line(what + ".shape " + shape_str(t.shape) + " has more elements than int64 can count"));
  }
  if (int64_t(jd.size()) != n)
    throw FormatError(one_line(what + ".data has " + std::to_string(jd.size()) + " values but shape " +
                               shape_str(t.shape) + " needs " + std::to_string(n)));
  t.data.resize(size_t(n));
  for (size_t i = 0; i < jd.size(); ++i) t.data[i] = number_from_json(jd[i], what, i);
  return t;
}

json case_to_json(const Case& c) {
  json j;
  j["op"] = c.op;
  j["params"] = c.params;
  json ins = json::object();
  for (const auto& [name, t] : c.inputs) ins[name] = tensor_to_json(t);
  j["inputs"] = std::move(ins);
  if (c.grad_output) j["grad_output"] = tensor_to_json(*c.grad_output);
  return j;
}

Case case_from_json(const json& j) {
  if (!j.is_object()) throw FormatError("case: not a JSON object");
  Case c;
  if (!j.contains("op") || !j.at("op").is_string()) throw FormatError("case: \"op\" must be a string");
  c.op = j.at("op").get<std::string>();
  // Every message below echoes the op name capped: a hostile case may make it 10 MB long.
  const std::string op = echo(c.op);
  if (j.contains("params")) {
    if (!j.at("params").is_object()) throw FormatError(op + ": \"params\" must be an object");
    c.params = j.at("params");
  }
  if (!j.contains("inputs") || !j.at("inputs").is_object())
    throw FormatError(op + ": \"inputs\" must be an object of tensors");
  for (const auto& [name, t] : j.at("inputs").items()) c.inputs[name] = tensor_from_json(t, op + ": inputs." + echo(name));
  if (j.contains("grad_output") && !j.at("grad_output").is_null())
    c.grad_output = tensor_from_json(j.at("grad_output"), op + ": grad_output");
  for (const auto& [key, v] : j.items())
    if (key != "op" && key != "params" && key != "inputs" && key != "grad_output" && key != "meta")
      throw FormatError(one_line(op + ": unknown case field \"" + echo(key) + "\""));
  return c;
}

json result_to_json(const Result& r) {
  json j;
  j["op"] = r.op;
  j["backend"] = r.backend;
  json outs = json::object(), grads = json::object();
  for (const auto& [name, t] : r.outputs) outs[name] = tensor_to_json(t);
  for (const auto& [name, t] : r.grads) grads[name] = tensor_to_json(t);
  j["outputs"] = std::move(outs);
  j["grads"] = std::move(grads);
  return j;
}

Result result_from_json(const json& j) {
  if (!j.is_object()) throw FormatError("result: not a JSON object");
  Result r;
  r.op = j.value("op", "");
  r.backend = j.value("backend", "");
  if (j.contains("outputs"))
    for (const auto& [name, t] : j.at("outputs").items()) r.outputs[name] = tensor_from_json(t, "outputs." + name);
  if (j.contains("grads"))
    for (const auto& [name, t] : j.at("grads").items()) r.grads[name] = tensor_from_json(t, "grads." + name);
  return r;
}

json parse_json_strict(std::istream& in, const std::string& where) {
  json root;
  StrictSax sax(root, where);
  try {
    json::sax_parse(in, &sax);
  } catch (const FormatError&) {
    throw;
  } catch (const std::exception& e) {
    // A read error (EIO, or EISDIR from a path that became a directory) surfaces from the
    // stream as std::ios_base::failure; anything else from the parser as json::exception.
    throw FormatError(one_line(where + ": cannot be read as JSON (" + std::string(e.what()) + ")"));
  }
  return root;
}

json parse_json_strict(const std::string& text, const std::string& where) {
  std::istringstream in(text);
  return parse_json_strict(in, where);
}

json read_json_file(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string where = echo(path);
  if (auto why = resource_limits_setting_error()) throw FormatError(one_line(where + ": " + *why));
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw FormatError(where + ": cannot open (no such file)");
  if (fs::is_directory(st)) throw FormatError(where + ": is a directory, not a JSON file");
  if (fs::is_regular_file(st) && limits_enforced()) {
    const uintmax_t size = fs::file_size(path, ec);
    const int64_t limit = resource_limits().file_bytes;
    if (!ec && size > uintmax_t(limit))
      throw FormatError(where + ": " + std::to_string(size) + " bytes is over the resource limit file_bytes=" +
                        std::to_string(limit) + " (OPLAB_LIMITS, docs/semantics.md)");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) throw FormatError(where + ": cannot open");
  return parse_json_strict(f, where);
}

void write_text_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) throw std::runtime_error(path + ": cannot write");
    f << text;
    if (!f.flush()) {
      f.close();
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the finished file into place");
  }
}

void write_json_file_atomic(const std::string& path, const json& j, int indent) {
  write_text_file_atomic(path, j.dump(indent) + "\n");
}

}  // namespace oplab
