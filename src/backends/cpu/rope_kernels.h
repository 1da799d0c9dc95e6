// The row rotation of rotary_embedding's kernel (rope.cpp), shared with the
// rotary attention kernel (attention.cpp), which rotates q and k rows inside
// its blocks instead of writing rotated copies (Note [Rotary attention]).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/rope_args.h"

namespace STRIDE_CPU_NAMESPACE {

// Rotates rows of D features by the angles of their table rows, by +angle
// (sign = 1) or -angle (sign = -1, the backward); pairs are interleaved
// (x[2i], x[2i + 1]), else split in halves (x[i], x[i + D/2]). float32 rows
// run in vectors of the CPU's width with cos and sign * sin rounded once to
// float32 (interleaved pairs on tables expanded to the rows' layout, (T, D));
// float64 rows run a scalar loop on the float64 tables. A row may be
// rotated in place (x == y).
template <class T>
class RowRotation {
 public:
  RowRotation(const kernels::AngleTables& tables, double sign, int64_t D, bool interleaved);
  // Rows t0, t0 + 1, ..., t0 + count - 1 (table rows alike): x's ldx apart,
  // y's ldy apart, a run of a matrix's rows in one call (rows of 16 floats
  // cost little more than a call each).
  void rows(const T* x, int64_t ldx, T* y, int64_t ldy, int64_t t0, int64_t count) const;

 private:
  std::vector<T> cosines_, sines_;  // sines_ holds sign * sin
  int64_t table_cols_;              // a table row's length: D / 2, or D expanded
  int64_t D_;
  bool interleaved_;
};

extern template class RowRotation<float>;
extern template class RowRotation<double>;

}  // namespace STRIDE_CPU_NAMESPACE
