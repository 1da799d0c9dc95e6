// The CPU kernels of unfold and fold (im2col and col2im, vol2col and col2vol
// for volumes: backends/kernels.h), which the 1-, 2- and 3-d convolutions and
// poolings of src/nn/conv.cpp and src/nn/pooling.cpp are built on. Each
// volume (a plane is one of depth 1) is independent: volumes run in parallel,
// and col2im sums into its own volume only, so no two threads write one
// element and the sums do not depend on the thread count.
#include <algorithm>
#include <cstdint>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using kernels::Im2colGeometry;

// Column c of the block row reads x at this position, or outside the volume.
int64_t source_column(const Im2colGeometry& g, int64_t c, int64_t j) {
  return c * g.stride[2] - g.pad[2] + j * g.dilation[2];
}

// Where block index `o` along dim d reads kernel offset `a`, or -1 outside.
int64_t source_index(const Im2colGeometry& g, size_t d, int64_t o, int64_t a) {
  const int64_t at = o * g.stride[d] - g.pad[d] + a * g.dilation[d];
  return at >= 0 && at < g.size[d] ? at : -1;
}

// Calls visit(row of cols, row of x or nullptr when outside, j) for each
// output row (o, r) of each kernel offset (a, i, j) of one volume, the rows
// of cols being out[2] long. The depth loops run once for a plane, so the
// 2-d convolutions pay nothing for the third dim.
template <class Cols, class Volume, class Visit>
void for_each_block_row(Cols* cols, Volume* x, const Im2colGeometry& g, Visit visit) {
  const int64_t blocks = g.out[0] * g.out[1] * g.out[2];
  Cols* kernel_row = cols;
  for (int64_t a = 0; a < g.kernel[0]; ++a) {
    for (int64_t i = 0; i < g.kernel[1]; ++i) {
      for (int64_t j = 0; j < g.kernel[2]; ++j, kernel_row += blocks) {
        Cols* row = kernel_row;
        for (int64_t o = 0; o < g.out[0]; ++o) {
          const int64_t d = source_index(g, 0, o, a);
          for (int64_t r = 0; r < g.out[1]; ++r, row += g.out[2]) {
            const int64_t h = d < 0 ? -1 : source_index(g, 1, r, i);
            visit(row, h < 0 ? nullptr : x + (d * g.size[1] + h) * g.size[2], j);
          }
        }
      }
    }
  }
}

int64_t volume_size(const Im2colGeometry& g) {
  return g.size[0] * g.size[1] * g.size[2];
}

int64_t cols_per_volume(const Im2colGeometry& g) {
  return g.kernel[0] * g.kernel[1] * g.kernel[2] * g.out[0] * g.out[1] * g.out[2];
}

template <class T>
void im2col_volume(const T* x, T* cols, const Im2colGeometry& g) {
  for_each_block_row(cols, x, g, [&](T* dst, const T* src, int64_t j) {
    for (int64_t c = 0; c < g.out[2]; ++c) {
      const int64_t w = source_column(g, c, j);
      dst[c] = (src != nullptr && w >= 0 && w < g.size[2]) ? src[w] : T(0);
    }
  });
}

template <class T>
void col2im_volume(const T* cols, T* x, const Im2colGeometry& g) {
  std::fill(x, x + volume_size(g), T(0));
  for_each_block_row(cols, x, g, [&](const T* src, T* dst, int64_t j) {
    if (dst == nullptr) return;
    for (int64_t c = 0; c < g.out[2]; ++c) {
      const int64_t w = source_column(g, c, j);
      if (w >= 0 && w < g.size[2]) dst[w] += src[c];
    }
  });
}

// Runs volume(p) for every volume, in parallel, a few thousand elements a task.
template <class F>
void for_each_volume(int64_t volumes, int64_t volume_work, F volume) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, volume_work));
  parallel_for(0, volumes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) volume(p);
  });
}

void im2col_kernel(const Tensor& x, const Im2colGeometry& g, Tensor& cols) {
  const int64_t volume_elems = volume_size(g);
  const int64_t cols_size = cols_per_volume(g);
  detail::dispatch_numeric_and_bool(x.dtype(), "unfold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data_ptr<T>();
    T* dst = cols.data_ptr<T>();
    for_each_volume(x.size(0), cols_size, [&](int64_t p) {
      im2col_volume(src + p * volume_elems, dst + p * cols_size, g);
    });
  });
}

void col2im_kernel(const Tensor& cols, const Im2colGeometry& g, Tensor& x) {
  const int64_t volume_elems = volume_size(g);
  const int64_t cols_size = cols_per_volume(g);
  detail::dispatch_numeric(cols.dtype(), "fold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = cols.data_ptr<T>();
    T* dst = x.data_ptr<T>();
    for_each_volume(x.size(0), cols_size, [&](int64_t p) {
      col2im_volume(src + p * cols_size, dst + p * volume_elems, g);
    });
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::im2col, im2col_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::col2im, col2im_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
