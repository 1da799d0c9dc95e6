// The CPU kernels of unfold and fold (im2col and col2im,
// backends/kernels.h), which the convolutions and poolings of src/nn/conv.cpp
// and src/nn/pooling.cpp are built on. Each plane is independent: planes run
// in parallel, and col2im sums into its own plane only, so no two threads
// write one element and the sums do not depend on the thread count.
#include <algorithm>
#include <cstdint>

#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace stride::cpu {

namespace {

using kernels::Im2colGeometry;

// Column c of the block row reads x at this position, or outside the plane.
int64_t source_column(const Im2colGeometry& g, int64_t c, int64_t j) {
  return c * g.stride_w - g.pad_w + j * g.dilation_w;
}

// Calls visit(row of cols, row of x or nullptr when outside) for each output
// row of each kernel offset (i, j) of one plane, the rows of cols being
// out_w long.
template <class Cols, class Plane, class Visit>
void for_each_block_row(Cols* cols, Plane* x, const Im2colGeometry& g, Visit visit) {
  const int64_t blocks = g.out_h * g.out_w;
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      Cols* kernel_row = cols + (i * g.kernel_w + j) * blocks;
      for (int64_t r = 0; r < g.out_h; ++r) {
        const int64_t h = r * g.stride_h - g.pad_h + i * g.dilation_h;
        const bool inside = h >= 0 && h < g.height;
        visit(kernel_row + r * g.out_w, inside ? x + h * g.width : nullptr, j);
      }
    }
  }
}

template <class T>
void im2col_plane(const T* x, T* cols, const Im2colGeometry& g) {
  for_each_block_row(cols, x, g, [&](T* dst, const T* src, int64_t j) {
    for (int64_t c = 0; c < g.out_w; ++c) {
      const int64_t w = source_column(g, c, j);
      dst[c] = (src != nullptr && w >= 0 && w < g.width) ? src[w] : T(0);
    }
  });
}

template <class T>
void col2im_plane(const T* cols, T* x, const Im2colGeometry& g) {
  std::fill(x, x + g.height * g.width, T(0));
  for_each_block_row(cols, x, g, [&](const T* src, T* dst, int64_t j) {
    if (dst == nullptr) return;
    for (int64_t c = 0; c < g.out_w; ++c) {
      const int64_t w = source_column(g, c, j);
      if (w >= 0 && w < g.width) dst[w] += src[c];
    }
  });
}

// Runs plane(p) for every plane, in parallel, a few thousand elements a task.
template <class F>
void for_each_plane(int64_t planes, int64_t plane_work, F plane) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, plane_work));
  parallel_for(0, planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) plane(p);
  });
}

void im2col_kernel(const Tensor& x, const Im2colGeometry& g, Tensor& cols) {
  const int64_t plane_size = g.height * g.width;
  const int64_t cols_size = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  detail::dispatch_numeric_and_bool(x.dtype(), "unfold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data_ptr<T>();
    T* dst = cols.data_ptr<T>();
    for_each_plane(x.size(0), cols_size,
                   [&](int64_t p) { im2col_plane(src + p * plane_size, dst + p * cols_size, g); });
  });
}

void col2im_kernel(const Tensor& cols, const Im2colGeometry& g, Tensor& x) {
  const int64_t plane_size = g.height * g.width;
  const int64_t cols_size = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  detail::dispatch_numeric(cols.dtype(), "fold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = cols.data_ptr<T>();
    T* dst = x.data_ptr<T>();
    for_each_plane(x.size(0), cols_size,
                   [&](int64_t p) { col2im_plane(src + p * cols_size, dst + p * plane_size, g); });
  });
}

}  // namespace

STRIDE_REGISTER_KERNEL(kernels::im2col, CPU, im2col_kernel);
STRIDE_REGISTER_KERNEL(kernels::col2im, CPU, col2im_kernel);

}  // namespace stride::cpu
