#include "core/backend.h"

#include <algorithm>

#include "core/op_desc.h"

namespace oplab {

Shape validate_case(const Case& c) { return op_desc(c.op).validate(c); }

Result evaluate(Backend& backend, const Case& c) {
  const ValidParams vp = op_desc(c.op).parse(c);
  if (auto why = backend.unavailable_reason()) throw BackendUnavailable(backend.name() + ": " + *why);
  if (auto why = backend.unsupported_reason(c)) throw Unsupported(backend.name() + ": " + *why);
  Result r = backend.run(c, vp);
  r.op = c.op;
  r.backend = backend.name();
  return r;
}

namespace {
std::vector<std::pair<int, BackendFactory>>& factories() {
  static std::vector<std::pair<int, BackendFactory>> list;
  return list;
}
}  // namespace

BackendRegistrar::BackendRegistrar(int order, BackendFactory factory) { factories().emplace_back(order, factory); }

std::vector<BackendFactory> registered_backend_factories() {
  auto list = factories();
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<BackendFactory> out;
  for (const auto& [order, f] : list) out.push_back(f);
  return out;
}

void Registry::add(std::unique_ptr<Backend> b) { backends_.push_back(std::move(b)); }

Backend* Registry::find(const std::string& name) const {
  for (const auto& b : backends_)
    if (b->name() == name) return b.get();
  return nullptr;
}

std::vector<Backend*> Registry::all() const {
  std::vector<Backend*> v;
  for (const auto& b : backends_) v.push_back(b.get());
  return v;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> v;
  for (const auto& b : backends_) v.push_back(b->name());
  return v;
}

}  // namespace oplab

namespace oplab {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float64: return "float64";
    case DType::Float32: return "float32";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::UInt8: return "uint8";
  }
  return "?";
}

std::optional<DType> dtype_from_name(const std::string& name) {
  for (DType t : {DType::Float64, DType::Float32, DType::Float16, DType::BFloat16, DType::UInt8})
    if (name == dtype_name(t)) return t;
  return std::nullopt;
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::Float64: return 0x1p-53;
    case DType::Float32: return 0x1p-24;
    case DType::Float16: return 0x1p-11;
    case DType::BFloat16: return 0x1p-8;
    case DType::UInt8: return 0x1p-9;
  }
  return 0;
}

const char* backend_role_name(BackendRole r) {
  switch (r) {
    case BackendRole::Implementation: return "implementation";
    case BackendRole::StudyVariant: return "study-variant";
    case BackendRole::SeededBug: return "seeded-bug";
  }
  return "?";
}

}  // namespace oplab
