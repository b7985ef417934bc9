#pragma once
// What one layer (fuzz, compare, gradcheck, bench, a backend family) needs to know of each op,
// registered next to that op's own files and looked up by op name. A layer never tests an op's
// name itself: it asks for the op's traits, and an op without them is a clear error naming the
// op and the layer, never a fall-through to another op's rule. tests/test_op_traits.cpp checks
// that every registered op has every layer's traits.
//
// A layer declares its traits as a struct with `static constexpr const char* kLayer`, and an
// op's file registers them with a file-scope `OpTraits<T>::Registrar`. The libraries holding
// registrars are linked whole-archive so that no registration is dropped.
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace oplab {

// An op lacks the traits a layer asked for: a programming error of the op's registration.
struct MissingTrait : std::logic_error {
  using std::logic_error::logic_error;
};

template <class Traits>
class OpTraits {
 public:
  struct Registrar {
    Registrar(const char* op, Traits traits) {
      auto& t = table();
      if (t.count(op)) duplicates().push_back(op);
      t[op] = std::move(traits);
    }
  };

  static const Traits& of(const std::string& op) {
    const auto& t = table();
    auto it = t.find(op);
    if (it == t.end())
      throw MissingTrait(op + ": no " + Traits::kLayer + " traits registered (they live next to the op's own files)");
    return it->second;
  }
  static bool has(const std::string& op) { return table().count(op) != 0; }
  static std::vector<std::string> ops() {
    std::vector<std::string> v;
    for (const auto& [op, t] : table()) v.push_back(op);
    return v;
  }
  // Ops registered twice for this layer (the last registration won): the completeness test
  // reports them.
  static const std::vector<std::string>& duplicated() { return duplicates(); }

 private:
  static std::map<std::string, Traits>& table() {
    static std::map<std::string, Traits> t;
    return t;
  }
  static std::vector<std::string>& duplicates() {
    static std::vector<std::string> d;
    return d;
  }
};

}  // namespace oplab
