#include "fuzz/wire.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace oplab::fuzz::wire {

namespace {

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

void put_tensors(std::string& out, const std::map<std::string, Tensor>& ts) {
  put_u64(out, ts.size());
  for (const auto& [name, t] : ts) {
    put_str(out, name);
    put_u64(out, t.shape.size());
    for (int64_t d : t.shape) put_u64(out, uint64_t(d));
    put_u64(out, t.data.size());
    out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(double));
  }
}

// Reads what put_* wrote, refusing to run past the end.
class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  uint64_t u64() {
    uint64_t v;
    need(sizeof v);
    std::memcpy(&v, s_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    const uint64_t n = u64();
    need(n);
    std::string v = s_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  void doubles(std::vector<double>& v, uint64_t n) {
    if (n > (s_.size() - pos_) / sizeof(double)) bad();
    v.resize(n);
    // An empty vector's data() may be null, and memcpy takes no null pointer even for 0 bytes.
    if (n > 0) std::memcpy(v.data(), s_.data() + pos_, n * sizeof(double));
    pos_ += n * sizeof(double);
  }
  std::map<std::string, Tensor> tensors() {
    std::map<std::string, Tensor> ts;
    const uint64_t count = u64();
    for (uint64_t i = 0; i < count; ++i) {
      const std::string name = str();
      Tensor t;
      const uint64_t rank = u64();
      if (rank > 16) bad();
      for (uint64_t d = 0; d < rank; ++d) t.shape.push_back(int64_t(u64()));
      doubles(t.data, u64());
      ts[name] = std::move(t);
    }
    return ts;
  }
  unsigned char byte() {
    need(1);
    return static_cast<unsigned char>(s_[pos_++]);
  }
  void end() const {
    if (pos_ != s_.size()) bad();
  }

 private:
  void need(uint64_t n) const {
    if (n > s_.size() - pos_) bad();
  }
  [[noreturn]] static void bad() { throw std::runtime_error("truncated or malformed wire bytes"); }
  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

std::string encode_result(const Result& r) {
  std::string out(1, char(Kind::Ok));
  put_str(out, r.op);
  put_str(out, r.backend);
  put_tensors(out, r.outputs);
  put_tensors(out, r.grads);
  put_u64(out, r.kernel_paths.size());
  for (const std::string& path : r.kernel_paths) put_str(out, path);
  return out;
}

std::string encode_error(Kind kind, const std::string& message) {
  std::string out(1, char(kind));
  put_str(out, message);
  return out;
}

std::string encode_case(const Case& c) {
  std::string out;
  put_str(out, c.op);
  const std::vector<std::uint8_t> params = nlohmann::json::to_cbor(c.params);
  put_str(out, std::string(params.begin(), params.end()));
  put_tensors(out, c.inputs);
  std::map<std::string, Tensor> grad;
  if (c.grad_output) grad.emplace("grad_output", *c.grad_output);
  put_tensors(out, grad);
  return out;
}

Case decode_case(const std::string& bytes) {
  Reader in(bytes);
  Case c;
  c.op = in.str();
  const std::string params = in.str();
  c.params = nlohmann::json::from_cbor(params.begin(), params.end());
  c.inputs = in.tensors();
  std::map<std::string, Tensor> grad = in.tensors();
  in.end();
  if (auto it = grad.find("grad_output"); it != grad.end()) c.grad_output = std::move(it->second);
  return c;
}

namespace {
// A single case begins with the length of its op's name, never this.
constexpr uint64_t kListTag = ~uint64_t(0);
}  // namespace

std::string encode_list(const std::vector<std::string>& items, bool tagged) {
  size_t n = 16;
  for (const std::string& s : items) n += 8 + s.size();
  std::string out;
  out.reserve(n);
  if (tagged) put_u64(out, kListTag);
  put_u64(out, items.size());
  for (const std::string& s : items) put_str(out, s);
  return out;
}

bool is_tagged_list(const std::string& bytes) {
  uint64_t v = 0;
  if (bytes.size() < sizeof v) return false;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v == kListTag;
}

std::vector<std::string> decode_list(const std::string& bytes, bool tagged) {
  Reader in(bytes);
  if (tagged && in.u64() != kListTag) throw std::runtime_error("truncated or malformed wire bytes");
  const uint64_t count = in.u64();
  if (count > bytes.size() / 8) throw std::runtime_error("truncated or malformed wire bytes");
  std::vector<std::string> items;
  items.reserve(count);
  for (uint64_t i = 0; i < count; ++i) items.push_back(in.str());
  in.end();
  return items;
}

Result decode(const std::string& bytes) {
  Reader in(bytes);
  const Kind kind = Kind(in.byte());
  if (kind == Kind::Ok) {
    Result r;
    r.op = in.str();
    r.backend = in.str();
    r.outputs = in.tensors();
    r.grads = in.tensors();
    const uint64_t paths = in.u64();
    if (paths > bytes.size() / 8) throw std::runtime_error("truncated or malformed wire bytes");
    for (uint64_t i = 0; i < paths; ++i) r.kernel_paths.push_back(in.str());
    in.end();
    return r;
  }
  const std::string message = in.str();
  in.end();
  switch (kind) {
    case Kind::InvalidCase: throw InvalidCase(message);
    case Kind::Unsupported: throw Unsupported(message);
    case Kind::Unavailable: throw BackendUnavailable(message);
    case Kind::FormatError: throw FormatError(message);
    default: throw std::runtime_error(message);
  }
}

}  // namespace oplab::fuzz::wire
