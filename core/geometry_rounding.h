#pragma once
// The type the reference forms its geometry in: double (the spec) unless a judge asks for a
// kernel's own type. A kernel of dtype T forms box corners, bin sizes, grid sizes, sample
// positions and source coordinates in T (or in float32, for half kernels that load half and
// compute in float), each operation rounded; to prove that a disagreement is only that, the
// judge re-runs the reference with each of those operations rounded the same way
// (compare/float_compare.h, the "geometry in T" alternative; SPEC §15). Only the geometry
// rounds: feature values, weights and sums stay in double.
//
// The setting is per thread (a judge evaluates the reference in its own thread or process) and
// scoped: `GeometryIn scope(DType::Float32);` for the duration of one evaluation.
#include <cmath>
#include <cstdint>

#include "core/backend.h"

namespace oplab {

namespace detail {
inline thread_local DType g_geometry_type = DType::Float64;  // every geometric operation
inline thread_local DType g_parameter_type = DType::Float64; // scales from parameters only
// Set when a finite geometric value rounded to infinity in the geometry's type (a coordinate
// beyond float16's 65504): the kernel's own answer there is no longer a rounding of the spec's.
inline thread_local bool g_geometry_overflowed = false;
inline double note_overflow(double v, double r) {
  if (std::isfinite(v) && !std::isfinite(r)) g_geometry_overflowed = true;
  return r;
}
}

// v rounded to the nearest value of t (ties to even, from double directly), with t's
// subnormals and overflow to infinity. Float64: v itself.
inline double round_to_type(double v, DType t) {
  if (t == DType::Float64 || !std::isfinite(v) || v == 0) return v;
  if (t == DType::Float32) return double(float(v));
  const int p = t == DType::Float16 ? 10 : 7;          // fraction bits
  const int emin = t == DType::Float16 ? -14 : -126;   // smallest normal exponent
  const double max = t == DType::Float16 ? 65504.0 : 3.3895313892515355e38;
  const int e = std::max(std::ilogb(v), emin);
  const double q = std::ldexp(1.0, e - p);  // the spacing of t's values around v
  const double r = std::nearbyint(v / q) * q;  // exact scaling; ties to even in the default mode
  return std::fabs(r) > max ? std::copysign(INFINITY, v) : r;
}

// The type the geometry is formed in now (float64 outside any scope).
inline DType geometry_type() { return detail::g_geometry_type; }

// One operation's result as the geometry's type rounds it.
inline double geom(double v) { return detail::note_overflow(v, round_to_type(v, detail::g_geometry_type)); }
// A scale derived from the parameters (in / out, x * spatial_scale) as the kernel rounds it.
// Some kernels round only these and form the rest in a wider type (torch's CPU interpolate
// takes the scale as float and the source coordinate in double).
inline double geom_param(double v) { return detail::note_overflow(v, round_to_type(v, detail::g_parameter_type)); }

// Whether a geometric value overflowed the geometry's type since the innermost GeometryIn
// scope began.
inline bool geometry_overflowed() { return detail::g_geometry_overflowed; }

// How much of the geometry a scope rounds: every operation, or the parameters' scales only.
enum class GeometryPart { Whole, Parameters };

class GeometryIn {
 public:
  explicit GeometryIn(DType t, GeometryPart part = GeometryPart::Whole)
      : saved_g_(detail::g_geometry_type), saved_p_(detail::g_parameter_type), saved_o_(detail::g_geometry_overflowed) {
    detail::g_parameter_type = t;
    detail::g_geometry_type = part == GeometryPart::Whole ? t : DType::Float64;
    detail::g_geometry_overflowed = false;
  }
  ~GeometryIn() {
    detail::g_geometry_type = saved_g_;
    detail::g_parameter_type = saved_p_;
    detail::g_geometry_overflowed = saved_o_;
  }
  GeometryIn(const GeometryIn&) = delete;
  GeometryIn& operator=(const GeometryIn&) = delete;

 private:
  DType saved_g_, saved_p_;
  bool saved_o_;
};

}  // namespace oplab
