// Register-tile transposes, shared by the strided copy kernel (copy_ of a
// transposed view) and the GEMM (Note [Transposed B] in blas.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "backends/cpu/capability.h"
#include "stride/parallel.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace STRIDE_CPU_NAMESPACE {

// Note [Transposed copy]
// ~~~~~~~~~~~~~~~~~~~~~~
// A transpose read or written element by element puts every access of one
// side on its own cache line. Instead, square N x N tiles are loaded as N
// vectors along the source's rows, transposed in registers and stored as N
// vectors along the destination's rows, so both sides move whole vectors.
// A row is at most one vector and 16 elements (16 floats fill an AVX-512
// register); N is halved when a side of the transpose is shorter, and the
// partial tiles at the edges go element by element. Bits are copied
// unchanged, so it serves every dtype of 2, 4 or 8 bytes.

#ifdef __AVX512F__
inline constexpr int kTransposeVectorBytes = 64;
#elif defined(__aarch64__)
// One q register a row (4 x 4 floats, 8 x 8 bfloat16): GCC 12 keeps wider
// rows in memory on AArch64, and lowers the block swaps of 16-byte rows to
// NEON's trn1/trn2 (zip for the larger blocks).
inline constexpr int kTransposeVectorBytes = 16;
#else
inline constexpr int kTransposeVectorBytes = 32;  // 16 ymm registers hold a whole tile
#endif

// Tile side for elements of `size` bytes: rows of at most one vector.
constexpr int transpose_tile_side(size_t size) {
  return std::min(16, kTransposeVectorBytes / int(size));
}

template <class U, int N>  // U: an unsigned integer of the element size
struct TransposeTile {
  typedef U Row __attribute__((vector_size(N * sizeof(U))));

  // Swaps the off-diagonal K x K blocks of rows a (index with bit K clear)
  // and b = a + K: one step of the recursive block transpose.
  template <int K, size_t... J>
  static void swap_blocks(Row& a, Row& b, std::index_sequence<J...>) {
    const Row lo = __builtin_shufflevector(a, b, ((J & K) == 0 ? J : N + J - K)...);
    const Row hi = __builtin_shufflevector(a, b, ((J & K) == 0 ? J + K : N + J)...);
    a = lo;
    b = hi;
  }
  template <int K = 1>
  static void transpose(Row (&r)[N]) {
    for (int i = 0; i < N; ++i) {
      if ((i & K) == 0) swap_blocks<K>(r[i], r[i + K], std::make_index_sequence<N>{});
    }
    if constexpr (2 * K < N) transpose<2 * K>(r);
  }

  // dst(i, c) = src(i, c) for i < rows, c < cols (both <= N); src's rows
  // (fixed i) and dst's rows (fixed c) are contiguous, `src_step` and
  // `dst_step` bytes apart.
  static void copy(
      const char* src, int64_t src_step, char* dst, int64_t dst_step, int64_t rows, int64_t cols) {
    if (rows < N || cols < N) {
      for (int64_t c = 0; c < cols; ++c) {
        U* d = reinterpret_cast<U*>(dst + c * dst_step);
        const char* s = src + c * int64_t(sizeof(U));
        for (int64_t i = 0; i < rows; ++i) d[i] = *reinterpret_cast<const U*>(s + i * src_step);
      }
      return;
    }
#if defined(__AVX__) && !defined(__AVX512F__)
    if constexpr (N == 8 && sizeof(U) == 4) {
      transpose_8x8(src, src_step, dst, dst_step);
      return;
    }
#endif
    Row r[N];
    for (int i = 0; i < N; ++i) std::memcpy(&r[i], src + i * src_step, sizeof(Row));
    transpose(r);
    for (int c = 0; c < N; ++c) std::memcpy(dst + c * dst_step, &r[c], sizeof(Row));
  }

#if defined(__AVX__) && !defined(__AVX512F__)
  // The 8 x 8 tile of 4-byte elements in ymm registers, by name: through
  // the generic Row array, GCC 12 keeps the rows on the stack and moves them
  // in 16-byte halves, slow enough to be a large share of a small GEMM with
  // B transposed. Unpacks pair rows,
  // shuffles make 2 x 2 blocks of pairs, 128-bit permutes swap the halves.
  static void transpose_8x8(const char* src, int64_t src_step, char* dst, int64_t dst_step) {
    const auto row = [&](int i) {
      return _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * src_step));
    };
    const __m256 a0 = _mm256_unpacklo_ps(row(0), row(1)), a1 = _mm256_unpackhi_ps(row(0), row(1));
    const __m256 a2 = _mm256_unpacklo_ps(row(2), row(3)), a3 = _mm256_unpackhi_ps(row(2), row(3));
    const __m256 a4 = _mm256_unpacklo_ps(row(4), row(5)), a5 = _mm256_unpackhi_ps(row(4), row(5));
    const __m256 a6 = _mm256_unpacklo_ps(row(6), row(7)), a7 = _mm256_unpackhi_ps(row(6), row(7));
    const __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xEE);
    const __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xEE);
    const __m256 b4 = _mm256_shuffle_ps(a4, a6, 0x44), b5 = _mm256_shuffle_ps(a4, a6, 0xEE);
    const __m256 b6 = _mm256_shuffle_ps(a5, a7, 0x44), b7 = _mm256_shuffle_ps(a5, a7, 0xEE);
    const auto store = [&](int c, __m256 v) {
      _mm256_storeu_ps(reinterpret_cast<float*>(dst + c * dst_step), v);
    };
    store(0, _mm256_permute2f128_ps(b0, b4, 0x20));
    store(1, _mm256_permute2f128_ps(b1, b5, 0x20));
    store(2, _mm256_permute2f128_ps(b2, b6, 0x20));
    store(3, _mm256_permute2f128_ps(b3, b7, 0x20));
    store(4, _mm256_permute2f128_ps(b0, b4, 0x31));
    store(5, _mm256_permute2f128_ps(b1, b5, 0x31));
    store(6, _mm256_permute2f128_ps(b2, b6, 0x31));
    store(7, _mm256_permute2f128_ps(b3, b7, 0x31));
  }
#endif
};

// dst (cols x rows) = src (rows x cols)^T, both row-major with leading
// dimensions ld_src >= cols and ld_dst >= rows; T of 4 bytes. Tiles along a
// source row come one after another, so each task streams through N source
// rows; the tasks spread over stride's threads.
template <class T>
void transpose_matrix(
    const T* src, int64_t ld_src, T* dst, int64_t ld_dst, int64_t rows, int64_t cols) {
  static_assert(sizeof(T) == 4, "transpose_matrix: 4-byte elements");
  constexpr int N = transpose_tile_side(sizeof(T));
  using Tile = TransposeTile<uint32_t, N>;
  const int64_t col_tiles = (cols + N - 1) / N;
  const int64_t tiles = (rows + N - 1) / N * col_tiles;
  parallel_for(0, tiles, std::max<int64_t>(1, 32768 / (N * N)), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r0 = t / col_tiles * N, c0 = t % col_tiles * N;
      Tile::copy(reinterpret_cast<const char*>(src + r0 * ld_src + c0), ld_src * int64_t(sizeof(T)),
                 reinterpret_cast<char*>(dst + c0 * ld_dst + r0), ld_dst * int64_t(sizeof(T)),
                 std::min<int64_t>(N, rows - r0), std::min<int64_t>(N, cols - c0));
    }
  });
}

}  // namespace STRIDE_CPU_NAMESPACE
