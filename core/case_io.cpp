#include "core/case_io.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

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
  throw FormatError(what + ".data[" + std::to_string(i) + "]=" + v.dump() +
                    " is not a number (or \"nan\", \"inf\", \"-inf\")");
}

}  // namespace

json tensor_to_json(const Tensor& t) {
  json data = json::array();
  for (double v : t.data) data.push_back(number_to_json(v));
  return json{{"shape", t.shape}, {"data", std::move(data)}};
}

Tensor tensor_from_json(const json& j, const std::string& what) {
  if (!j.is_object() || !j.contains("shape") || !j.contains("data"))
    throw FormatError(what + " must be an object with \"shape\" and \"data\"");
  const json& js = j.at("shape");
  const json& jd = j.at("data");
  if (!js.is_array()) throw FormatError(what + ".shape must be an array of integers");
  if (!jd.is_array()) throw FormatError(what + ".data must be an array");
  Tensor t;
  for (const json& d : js) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw FormatError(what + ".shape has " + d.dump() + ", not a non-negative integer");
    t.shape.push_back(d.get<int64_t>());
  }
  int64_t n = 0;
  try {
    n = shape_numel(t.shape);
  } catch (const std::overflow_error&) {
    throw FormatError(what + ".shape " + shape_str(t.shape) + " has more elements than int64 can count");
  }
  if (int64_t(jd.size()) != n)
    throw FormatError(what + ".data has " + std::to_string(jd.size()) + " values but shape " +
                      shape_str(t.shape) + " needs " + std::to_string(n));
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
  if (j.contains("params")) {
    if (!j.at("params").is_object()) throw FormatError(c.op + ": \"params\" must be an object");
    c.params = j.at("params");
  }
  if (!j.contains("inputs") || !j.at("inputs").is_object())
    throw FormatError(c.op + ": \"inputs\" must be an object of tensors");
  for (const auto& [name, t] : j.at("inputs").items()) c.inputs[name] = tensor_from_json(t, c.op + ": inputs." + name);
  if (j.contains("grad_output") && !j.at("grad_output").is_null())
    c.grad_output = tensor_from_json(j.at("grad_output"), c.op + ": grad_output");
  for (const auto& [key, v] : j.items())
    if (key != "op" && key != "params" && key != "inputs" && key != "grad_output" && key != "meta")
      throw FormatError(c.op + ": unknown case field \"" + key + "\"");
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

json read_json_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw FormatError(path + ": cannot open");
  try {
    return json::parse(f);
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    throw FormatError(path + ": not valid JSON (" + msg.substr(msg.find(']') + 2) + ")");
  }
}

void write_json_file_atomic(const std::string& path, const json& j, int indent) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) throw std::runtime_error(path + ": cannot write");
    f << j.dump(indent) << '\n';
    if (!f.flush()) throw std::runtime_error(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the finished file into place");
  }
}

}  // namespace oplab
