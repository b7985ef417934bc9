#pragma once
// Gradient checks of every backward, generic over ops and backends. Overview (each file's own
// header says the details):
//
//   runner.h      check_op / check_cases: every check below, on a fixed-seed sample of cases
//   fd.h          central finite differences: random projections v^T J u on every case, the
//                 full Jacobian on small ones; steps chosen per input and kept inside one
//                 smooth piece
//   kinks.h       where the pieces switch, from each op's own sampling coordinates and values
//                 (kinks_<op>.cpp are the only files here that name an op); a step that would
//                 cross a kink is shrunk, a point on a kink is moved, and both are counted
//   aim.h         kink-aimed variants: elements moved exactly onto a kink
//   one_sided.h   one-sided derivatives at kinks and which side a backend's gradient takes
//   adjoint.h     <J x, y> = <x, J^T y> for inputs the forward is affine in, to ~1e-12
//   vs_ref.h      a backend's gradients against the reference's, under the project's
//                 agreement policies (double: 1e-10 relative; float32: SPEC §9 bound)
//   structure.h   gradient entries and shapes, zero grad_output, absent optional inputs
//   record.h      one record per check; summaries for the terminal and JSON
//
// Which forward the differences are taken of: the backend's own when it computes in double
// (a backward must be the derivative of its own forward), the reference's for a float32
// backend. Nothing is dropped silently: a check that is no evidence is "skipped" with its
// reason, and kink handling is counted per record (moved, shrunk, skipped).
#include "gradcheck/record.h"
#include "gradcheck/runner.h"
