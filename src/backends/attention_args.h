// What the fused attention kernels (backends/kernels.h) know of a call
// besides its tensors: the op fills it in, its kernels read it.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/rope_args.h"
#include "stride/tensor.h"

namespace stride::kernels {

struct AttentionShape {
  int64_t N = 0, L = 0, S = 0, E = 0, Ev = 0;
  double scale = 1;
  bool causal = false;
  // A causal mask aligned bottom-right (query i sees keys j <= i + S - L),
  // else top-left (j <= i): Note [Causal alignment] in src/nn/attention.cpp.
  bool bottom_right = false;
  // The dropout of Note [Fused attention]: p (0 when there is nothing to
  // draw), and when p > 0 the Philox key and first counter of the fill the
  // forward reserved.
  double dropout_p = 0;
  uint64_t key = 0, base = 0;
  // Rotary attention (Note [Rotary attention]): the rotation of q and k, or
  // null. cos and sin are the caller's, kept for the backward written with
  // ops; the kernels rotate by tables, the same values (L, E/2) in float64.
  struct Rotary {
    Tensor cos, sin;
    bool interleaved;  // RopeConvention::Interleaved, else HalfSplit
    std::shared_ptr<const AngleTables> tables;
  };
  std::shared_ptr<const Rotary> rotary;
};

}  // namespace stride::kernels
