// The C ABI route (include/oplab/plugin.h, docs/plugin.md): a shared library loaded with
// dlopen whose one entry point describes its ops; each case is converted to the op's declared
// dtype, evaluated into buffers this side allocated, and read back as doubles.
#include "external/plugin_backend.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "external/dtype_convert.h"
#include "external/plugin_call.h"
#include "external/plugin_memory.h"
#include "oplab/plugin.h"

namespace oplab {
namespace {

std::optional<DType> dtype_of_code(int32_t code) {
  switch (code) {
    case OPLAB_DTYPE_FLOAT64: return DType::Float64;
    case OPLAB_DTYPE_FLOAT32: return DType::Float32;
    case OPLAB_DTYPE_FLOAT16: return DType::Float16;
    case OPLAB_DTYPE_BFLOAT16: return DType::BFloat16;
  }
  return std::nullopt;
}

int32_t code_of_dtype(DType t) {
  switch (t) {
    case DType::Float64: return OPLAB_DTYPE_FLOAT64;
    case DType::Float32: return OPLAB_DTYPE_FLOAT32;
    case DType::Float16: return OPLAB_DTYPE_FLOAT16;
    case DType::BFloat16: return OPLAB_DTYPE_BFLOAT16;
    case DType::UInt8: break;  // the plugin ABI has no uint8 element type (include/oplab/plugin.h)
  }
  return 0;
}

bool valid_backend_name(const char* s) {
  if (!s || !*s) return false;
  for (const char* p = s; *p; ++p)
    if (!(std::isalnum(static_cast<unsigned char>(*p)) || *p == '-' || *p == '_' || *p == '.')) return false;
  return std::strlen(s) <= 64;
}

// A message from the plugin's buffer (up to its first NUL): its first line.
std::string one_line(std::string s) {
  const size_t nl = s.find_first_of("\r\n");
  if (nl != std::string::npos) s.resize(nl);
  return s.empty() ? "(no message)" : s;
}

// A signalling NaN with a payload no arithmetic produces (quiet bit clear, payload 0x0b1ab),
// in the low bytes of the value (little-endian, as the buffers are): float64, float32, and
// the 16-bit types' own patterns.
uint64_t poison_bits(DType t) {
  switch (t) {
    case DType::Float64: return 0x7ff000000000b1abull;
    case DType::Float32: return 0x7f80b1abu;
    case DType::Float16: return 0x7c1bu;
    case DType::BFloat16: return 0x7f8bu;
    case DType::UInt8: break;
  }
  return 0;
}

// One tensor as the plugin sees it, in guarded memory this side owns (external/plugin_memory.h),
// everything around it the signalling NaN of its dtype.
struct Buffer {
  std::string name;
  Shape shape;
  DType dtype = DType::Float64;
  GuardedBytes bytes;

  // Every element the signalling NaN as well: the output buffer, so that an element the plugin
  // never writes is seen (unwritten()) rather than read as a plausible 0, and one it reads
  // before writing (out += ...) turns NaN, which the judge fails.
  Buffer(std::string n, Shape s, DType t)
      : name(std::move(n)), shape(std::move(s)), dtype(t),
        bytes(size_t(shape_numel(shape)) * dtype_size(t), poison_bits(t), dtype_size(t)) {}
  static Buffer zeros(std::string n, Shape s, DType t) {
    Buffer b(std::move(n), std::move(s), t);
    std::memset(b.bytes.data(), 0, b.bytes.size());
    return b;
  }
  static Buffer of(const std::string& n, const Tensor& v, DType t) {
    Buffer b(n, v.shape, t);
    encode_dtype(v.data.data(), v.numel(), t, b.bytes.data());
    return b;
  }
  // The elements still holding the poison, and the first of them.
  int64_t unwritten(int64_t* first) const {
    const size_t size = dtype_size(dtype);
    const uint64_t bits = poison_bits(dtype);
    int64_t n = 0;
    for (size_t at = 0; at < bytes.size(); at += size)
      if (std::memcmp(bytes.data() + at, &bits, size) == 0 && n++ == 0) *first = int64_t(at / size);
    return n;
  }
  std::vector<unsigned char> copy() const { return {bytes.data(), bytes.data() + bytes.size()}; }
  oplab_tensor_v1 view() {
    return {name.c_str(), code_of_dtype(dtype), int32_t(shape.size()), shape.data(), shape_numel(shape), bytes.data()};
  }
  Tensor read() const {
    Tensor t(shape);
    decode_dtype(bytes.data(), t.numel(), dtype, t.data.data());
    return t;
  }
};

struct OpDecl {
  DType dtype;
  bool grads;
};

class PluginBackend : public Backend {
 public:
  PluginBackend(std::string path, const oplab_plugin_v1* api, std::map<std::string, OpDecl> ops, BackendRole role, bool builtin)
      : path_(std::move(path)), api_(api), ops_(std::move(ops)), role_(role), builtin_(builtin) {}

  std::string name() const override { return api_->name; }
  std::string description() const override {
    return std::string(api_->description ? api_->description : "") + (builtin_ ? "" : " (plugin " + path_ + ")");
  }
  // Built in (a declaration of this binary's): nothing to register again to replay it.
  std::string origin() const override { return builtin_ ? std::string() : "plugin: " + path_; }
  BackendRole role() const override { return role_; }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    auto it = ops_.find(c.op);
    if (it == ops_.end()) return name() + " (plugin) does not declare op " + c.op;
    if (c.grad_output && !it->second.grads) return name() + " (plugin) computes no backward of " + c.op;
    return std::nullopt;
  }
  DType dtype(const std::string& op) const override {
    auto it = ops_.find(op);
    return it == ops_.end() ? DType::Float64 : it->second.dtype;
  }
  bool computes_grads(const std::string& op) const override {
    auto it = ops_.find(op);
    return it != ops_.end() && it->second.grads;
  }

  Result run(const Case& c, const ValidParams& vp) override {
    const DType t = ops_.at(c.op).dtype;
    // Inputs in the op's declared order; gradients for the differentiable ones supplied.
    std::vector<Buffer> inputs, outputs, grads;
    for (const auto& spec : op_desc(c.op).inputs)
      if (const Tensor* in = c.opt(spec.name)) inputs.push_back(Buffer::of(spec.name, *in, t));
    outputs.emplace_back("output", vp.output_shape, t);
    std::optional<Buffer> gout;
    if (c.grad_output) {
      gout.emplace(Buffer::of("grad_output", *c.grad_output, t));
      // Gradients start zero-filled (include/oplab/plugin.h): a backward scatters into them.
      for (const std::string& n : grad_inputs(c)) grads.push_back(Buffer::zeros(n, c.in(n).shape, t));
    }
    // What the plugin was handed, to check it left its inputs as they were.
    std::vector<std::vector<unsigned char>> sent;
    for (const Buffer& b : inputs) sent.push_back(b.copy());
    if (gout) sent.push_back(gout->copy());
    auto views = [](std::vector<Buffer>& v) {
      std::vector<oplab_tensor_v1> out;
      for (Buffer& b : v) out.push_back(b.view());
      return out;
    };
    std::vector<oplab_tensor_v1> in_v = views(inputs), out_v = views(outputs), grad_v = views(grads);
    oplab_tensor_v1 gout_v{};
    if (gout) gout_v = gout->view();
    const std::string params = c.params.dump();
    oplab_call_v1 call{c.op.c_str(), params.c_str(), code_of_dtype(t),
                       int32_t(in_v.size()), in_v.data(), gout ? &gout_v : nullptr,
                       int32_t(out_v.size()), out_v.data(), int32_t(grad_v.size()), grad_v.data()};
    // A crash (a stray write, a bad pointer) ends as a KernelCrash naming the plugin, not as oplab's.
    const PluginAnswer answer = call_plugin(*api_, call, "plugin " + path_);
    const std::string message = one_line(answer.message);
    switch (answer.code) {
      case OPLAB_OK: break;
      case OPLAB_UNSUPPORTED: throw Unsupported("unsupported by the plugin: " + message);
      case OPLAB_INVALID: throw std::runtime_error("plugin rejected a valid case: " + message);
      case OPLAB_FAILED: throw std::runtime_error("plugin failed: " + message);
      default:
        throw std::runtime_error("plugin evaluate returned " + std::to_string(answer.code) + ", not an OPLAB_* code");
    }
    Result r;
    r.op = c.op;
    r.backend = name();
    // A kernel that cheats the judge fails the case, whatever its numbers: one that writes
    // outside its results, changes what it was given, or leaves a result unwritten.
    std::vector<const Buffer*> all;
    for (auto* group : {&inputs, &outputs, &grads})
      for (const Buffer& b : *group) all.push_back(&b);
    if (gout) all.push_back(&*gout);
    for (const Buffer* b : all)
      if (!b->bytes.fill_intact()) throw std::runtime_error("plugin wrote outside " + b->name + " (just before or past its end)");
    for (size_t i = 0; i < sent.size(); ++i) {
      const Buffer& b = i < inputs.size() ? inputs[i] : *gout;
      const unsigned char* p = b.bytes.data();
      if (!std::equal(sent[i].begin(), sent[i].end(), p)) {
        const size_t at = size_t(std::mismatch(sent[i].begin(), sent[i].end(), p).first - sent[i].begin());
        throw std::runtime_error("plugin changed its input " + b.name + " (element " + std::to_string(at / dtype_size(t)) +
                                 "): inputs are read-only");
      }
    }
    int64_t first = 0;
    if (const int64_t n = outputs[0].unwritten(&first))
      throw std::runtime_error("plugin left " + std::to_string(n) + " of " + std::to_string(shape_numel(outputs[0].shape)) +
                               " elements of output unwritten (the first: element " + std::to_string(first) + ")");
    r.outputs["output"] = outputs[0].read();
    for (const Buffer& b : grads) r.grads[b.name] = b.read();
    return r;
  }

 private:
  std::string path_;
  const oplab_plugin_v1* api_;  // static data of the library, which stays loaded (never dlclose'd)
  std::map<std::string, OpDecl> ops_;
  BackendRole role_;
  bool builtin_;
};

// The plugin's declaration, checked field by field; throws BackendUnavailable naming PATH.
std::map<std::string, OpDecl> checked_ops(const std::string& path, const oplab_plugin_v1* api) {
  auto bad = [&](const std::string& what) { return BackendUnavailable("plugin " + path + ": " + what); };
  if (api->abi_version != OPLAB_PLUGIN_ABI_VERSION)
    throw bad("declares ABI version " + std::to_string(api->abi_version) + ", this oplab reads version " +
              std::to_string(OPLAB_PLUGIN_ABI_VERSION) + " (rebuild it against this oplab's include/oplab/plugin.h)");
  if (!valid_backend_name(api->name))
    throw bad("its name must be 1 to 64 letters, digits, '-', '_' or '.'");
  if (!api->evaluate) throw bad("its evaluate function is NULL");
  if (api->n_ops < 1 || !api->ops) throw bad("declares no ops");
  const std::vector<std::string> known = op_names();
  std::map<std::string, OpDecl> ops;
  for (int32_t i = 0; i < api->n_ops; ++i) {
    const oplab_op_v1& o = api->ops[i];
    const std::string op = o.name ? o.name : "";
    if (std::find(known.begin(), known.end(), op) == known.end())
      throw bad("ops[" + std::to_string(i) + "] names unknown op \"" + op + "\"");
    const std::optional<DType> t = dtype_of_code(o.dtype);
    if (!t)
      throw bad("op " + op + " declares unknown dtype " + std::to_string(o.dtype) +
                " (OPLAB_DTYPE_FLOAT64/FLOAT32/FLOAT16/BFLOAT16)");
    if (!ops.emplace(op, OpDecl{*t, o.grads != 0}).second) throw bad("declares op " + op + " twice");
  }
  return ops;
}

}  // namespace

std::unique_ptr<Backend> load_plugin_backend(const std::string& path, BackendRole role) {
  // dlopen searches the library path for a bare name; a plugin is named by its file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    throw BackendUnavailable("plugin " + path + ": cannot load it as a shared library: " +
                             one_line(e ? e : "unknown error"));
  }
  try {
    auto entry = reinterpret_cast<oplab_plugin_v1_entry_fn>(dlsym(handle, OPLAB_PLUGIN_ENTRY));
    if (!entry)
      throw BackendUnavailable("plugin " + path + ": exports no symbol " + OPLAB_PLUGIN_ENTRY +
                               " (not an oplab plugin, or built for another ABI version)");
    const oplab_plugin_v1* api = entry();
    if (!api) throw BackendUnavailable("plugin " + path + ": " + OPLAB_PLUGIN_ENTRY + " returned NULL");
    return std::make_unique<PluginBackend>(path, api, checked_ops(path, api), role, false);
  } catch (...) {
    dlclose(handle);
    throw;
  }
}

std::unique_ptr<Backend> plugin_backend_from_api(const oplab_plugin_v1* api, const std::string& path, BackendRole role) {
  return std::make_unique<PluginBackend>(path, api, checked_ops(path, api), role, true);
}

}  // namespace oplab
