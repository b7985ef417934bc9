#pragma once
// The Python skeleton of a standalone reproduction (core/repro.h), shared by the peers whose
// library is a Python package (torch, Pillow, cv2): the header saying what it shows, the inputs
// and the reference's values written as numpy arrays, the comparison and the exit contract. The
// peer supplies its imports and a function `library()` that calls its library on `inputs` and
// returns {name: array} for the tensors of `spec`.
#include <string>

#include "core/repro.h"

namespace oplab {

struct PythonRepro {
  std::string needs;    // "torch, torchvision, numpy": for the header
  std::string imports;  // import lines (numpy is imported by the skeleton)
  std::string library;  // `def library(): ...`
  std::string about;    // one line: the library and how it is called ("Pillow 9.4.0, Image.resize on mode F images")
};

ReproScript python_repro(const ReproRequest& r, const PythonRepro& p);

// A number as Python source: 17 significant digits, nan / inf / -inf by name.
std::string py_number(double v);
// A JSON value (a parameter) as Python source: true -> True, null -> None, strings quoted.
std::string py_value(const nlohmann::json& v);

}  // namespace oplab
