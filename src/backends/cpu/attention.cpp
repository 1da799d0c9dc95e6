// The CPU kernels of scaled_dot_product_attention and rotary_attention
// (backends/kernels.h): the fused forward and backward of Note [Fused
// attention], rotating q and k inside their blocks for rotary attention
// (Note [Rotary attention]), and the dropout mask of the backward written
// with ops.
//
// Note [Fused attention]
// ~~~~~~~~~~~~~~~~~~~~~~
// Per (batch, head) matrix pair, one thread computes S = scale q k^T into a
// thread-local (L, S) buffer, applies the causal limit by row, takes the
// softmax in place (saving lse_i = max_i + log sum_i per row), applies the
// dropout mask M (below; all ones without dropout) and multiplies by v, so
// O = Pd V with Pd = P * M. For long rows only the output and lse (N, L) are
// kept for backward: the probabilities P = exp(scale q k^T - lse) and M are
// recomputed there, one (L, S) block at a time, so memory does not grow with
// B * H * L * S (the flash-attention idea; blocks of whole rows suffice at
// these lengths; with a causal mask, blocks of kCausalBlock query rows stop
// their GEMMs at the last key they see). Rows no longer than the q and
// output rows they go with (S <= E + Ev) are kept instead, with M's choices
// as bytes: no more memory than q and O, and the backward's q k^T, exp and
// dropout draws are skipped (saves_probs in src/nn/attention.cpp). Either way:
//   dV = Pd^T dO,  dP = (dO V^T) * M,  dS = P * (dP - rowsum(dO * O)),
//   dQ = scale dS K,  dK = scale dS^T Q,
// where rowsum(dO * O) is the softmax's rowsum(P * dP), since O = Pd V. The
// kernel sums it that way, over a row's visible keys, so it never reads O
// (S products a row instead of Ev, and one (L, Ev) matrix less from memory).
// When the backward is itself recorded (create_graph), it is written with
// public ops instead (M as a tensor), so second derivatives are right.
//
// Dropout (0 < p < 1) drops exactly the elements nn::functional::dropout
// drops from the composed path's contiguous (N, L, S) probabilities for the
// same generator state: the forward reserves the same ceil(N L S / 2) Philox
// counters as its bernoulli_ fill, and element (n, i, j) is kept (M = 1 /
// (1 - p), in the dtype, as dropout's mask) when draw (n L + i) S + j of that
// fill is below 1 - p, else dropped (M = 0). bernoulli_at makes any row's
// draws from the key and the first counter, so the mask is never stored
// whole, does not depend on the thread count, and the generator ends where
// the composed path leaves it. lse stays that of the undropped softmax.
//
// q, k, v, out and dout are read where they lie, as GEMM operands with their
// own leading dimension (Note [Row layout]); out follows q's memory order and
// dq, dk, dv those of q, k, v, so the heads view (B, L, H, E).transpose(1, 2)
// of a projection is never copied and neither is a narrowed KV cache.
//
// Note [Rotary attention]
// ~~~~~~~~~~~~~~~~~~~~~~~
// rotary_attention is scaled_dot_product_attention(rotary_embedding(q),
// rotary_embedding(k), v) in one kernel: a task rotates a head's keys and a
// block's queries into its own buffers (L1/L2-sized) right before the GEMMs
// that read them, and the backward rotates dq and dk back by -angle where it
// writes them. The rotated q and k, each as large as q, are never written to
// memory and read back: separate rope passes and their backwards are bound
// by memory, while fused the rotations cost only their arithmetic (twice in
// the backward; measured: bench/HISTORY.md). The
// rotation is rotary_embedding's own row kernel (rope_kernels.h), so the
// results are those of the composition.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"
#include "backends/cpu/random_fill.h"
#include "backends/cpu/rope_kernels.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "backends/row_layout.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using kernels::AttentionShape;

// Keys [0, limit) are visible to query row i.
int64_t key_limit(int64_t i, int64_t L, int64_t S, bool causal, bool bottom_right) {
  if (!causal) return S;
  const int64_t shift = bottom_right ? S - L : 0;
  return std::clamp<int64_t>(i + shift + 1, 0, S);
}

// M's nonzero value: as dropout's mask, bernoulli_(1 - p) then div_(1 - p) in T.
template <class T>
T dropout_scale(const AttentionShape& a) {
  return T(1) / T(1 - a.dropout_p);
}

// The dropout choices of Note [Fused attention], one block of query rows at a
// time: after draw(n, i0, rows, keys), keep(i)[j] is 1 where M at
// (n, i0 + i, j) is dropout_scale, 0 where it is 0, for i < rows and
// j < keys. One draw per block keeps Philox in whole batches (a row of a
// short causal head needs only a few counters).
class DropoutRows {
 public:
  explicit DropoutRows(const AttentionShape& a, int64_t block_rows)
      : a_(a), keep_(size_t(a.dropout_p > 0 ? block_rows * a.S : 0)) {}

  // Into `into` (rows a.S apart, as the forward saves them for the
  // backward) instead of the object's own buffer, when not null.
  void draw(int64_t n, int64_t i0, int64_t rows, int64_t keys, uint8_t* into = nullptr) {
    rows_ = into != nullptr ? into : keep_.data();
    if (rows == 0 || keys == 0) return;
    cpu::bernoulli_at(rows_, (n * a_.L + i0) * a_.S, (rows - 1) * a_.S + keys, 1 - a_.dropout_p,
                      a_.key, a_.base);
  }
  const uint8_t* keep(int64_t i) const { return rows_ + i * a_.S; }

 private:
  const AttentionShape& a_;
  std::vector<uint8_t> keep_;
  uint8_t* rows_ = keep_.data();
};

// What the forward keeps for the backward when the probabilities are small
// (saves_probs): P (N, L, S) before dropout, and with dropout whether M
// keeps each element. Null pointers: the backward recomputes them.
template <class T>
struct SavedProbs {
  T* probs = nullptr;
  std::conditional_t<std::is_const_v<T>, const uint8_t, uint8_t>* keep = nullptr;
};

template <class T>
using In = ::stride::detail::RowMatrices<const T>;
template <class T>
using Out = ::stride::detail::RowMatrices<T>;

// The float32 row kernels below run at the register width (Note [Register
// width] in vec_math.h): rows of scores are short (16 keys in the tiny
// Llamas), and 16-lane code on a CPU without AVX-512 spilled its vectors
// and lowered its selects through the stack; at the article Llama's heads
// the softmax took more time than the GEMMs around it. The kernels' (L, S)
// buffers have rows padded to whole vectors (padded_row), so a row's last
// vector is loaded whole and its lanes past the row's end replaced in
// registers: masked loads of scores the GEMM had just stored stall on CPUs
// that do not forward stores into masked loads. Rows are processed phase by phase
// (every row's max, then every row's exponentials, ...), so the short
// dependency chains of different rows overlap.
using NVec = cpu::vec::NativeVec;
using NInts = int32_t __attribute__((vector_size(sizeof(NVec))));
constexpr int64_t kRowLanes = cpu::vec::kNativeLanes;

template <size_t... I>
constexpr NInts lane_indices(std::index_sequence<I...>) {
  return NInts{int32_t(I)...};
}
constexpr NInts kLaneIndex = lane_indices(std::make_index_sequence<size_t(kRowLanes)>{});

// Leading dimension of the kernels' (L, S) buffers: float32 rows padded to
// whole vectors.
template <class T>
int64_t padded_row(int64_t S) {
  if constexpr (std::is_same_v<T, float>) return (S + kRowLanes - 1) / kRowLanes * kRowLanes;
  return S;
}

// The whole vector at p with the lanes from `valid` on (valid may be <= 0
// or past the vector) replaced by `fill`.
inline NVec load_row(const float* p, int64_t valid, float fill) {
  return kLaneIndex < int32_t(std::min<int64_t>(valid, kRowLanes)) ? cpu::vec::load_native(p)
                                                                   : cpu::vec::splat<NVec>(fill);
}

// Dropout's multipliers for the lanes of a vector: scale where keep is
// nonzero, 0 where it is zero and from lane `valid` on (keep is read for
// lanes below valid only).
inline NVec dropout_lanes(const uint8_t* keep, int64_t valid, float scale) {
  using Bytes = uint8_t __attribute__((vector_size(kRowLanes)));
  Bytes b{};
  std::memcpy(&b, keep, size_t(std::clamp<int64_t>(valid, 0, kRowLanes)));
  return __builtin_convertvector(b, NInts) != 0 ? cpu::vec::splat<NVec>(scale) : NVec{};
}

// The largest of row[0, n) (n > 0); a NaN is skipped, as std::max does.
template <class T>
T row_max(const T* row, int64_t n) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  if constexpr (std::is_same_v<T, float>) {
    NVec mv = cpu::vec::splat<NVec>(kNegInf);
    for (int64_t j = 0; j < n; j += kRowLanes) {
      const NVec v = load_row(row + j, n - j, kNegInf);
      mv = v > mv ? v : mv;
    }
    return cpu::vec::max_lanes(mv);
  } else {
    T m = kNegInf;
    for (int64_t j = 0; j < n; ++j) m = std::max(m, row[j]);
    return m;
  }
}

// row[j] = exp(row[j] - shift) for j < n and 0 for n <= j < keys (cpu::vec's
// e^x in float32, libm in float64); returns the sum of the exponentials,
// its lanes added in a fixed order, so a row's result does not depend on
// the thread count.
template <class T>
T exp_row(T* row, int64_t n, int64_t keys, T shift) {
  if constexpr (std::is_same_v<T, float>) {
    NVec sum{};
    for (int64_t j = 0; j < keys; j += kRowLanes) {
      // Vectors wholly past n (a causal row's masked keys) skip the e^x.
      const NVec e = j >= n ? NVec{}
                     : kLaneIndex < int32_t(std::min<int64_t>(n - j, kRowLanes))
                         ? cpu::vec::detail::exp_lanes(cpu::vec::load_native(row + j) - shift)
                         : NVec{};
      cpu::vec::store_native(row + j, e);
      sum += e;
    }
    return cpu::vec::sum_lanes(sum);
  } else {
    T sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += row[j] = std::exp(row[j] - shift);
    std::fill(row + std::min(n, keys), row + keys, T(0));
    return sum;
  }
}

// The end of a forward row, whose exponentials are row[0, n) and zeros
// from n to `keys`: the probabilities P = row * factor go to saved[0, keys)
// when saved is not null, and row becomes Pd = P * M, M from dropout's
// choices keep[0, n) (Note [Fused attention]), or P without dropout (keep
// null). One pass over the row: a separate copy was a library call per
// row of 16 keys.
template <class T>
void finish_row(T* row, int64_t n, int64_t keys, T factor, T* saved, const uint8_t* keep, T scale) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t j = 0; j < keys; j += kRowLanes) {
      const NVec x = cpu::vec::load_native(row + j);
      const NVec p =
          kLaneIndex < int32_t(std::min<int64_t>(n - j, kRowLanes)) ? x * factor : NVec{};
      if (saved != nullptr) {
        if (j + kRowLanes <= keys) {
          cpu::vec::store_native(saved + j, p);
        } else {  // saved rows are not padded: the next row starts at keys
          std::memcpy(saved + j, &p, size_t(keys - j) * sizeof(float));
        }
      }
      cpu::vec::store_native(row + j,
                             keep != nullptr ? p * dropout_lanes(keep + j, n - j, scale) : p);
    }
  } else {
    for (int64_t j = 0; j < n; ++j) row[j] *= factor;
    if (saved != nullptr) std::copy_n(row, keys, saved);
    if (keep != nullptr) {
      for (int64_t j = 0; j < n; ++j) row[j] *= keep[j] != 0 ? scale : T(0);
    }
  }
}

// A row of the backward (Note [Fused attention]): on entry pr holds P and
// ds holds dO V^T for keys [0, keys), P being 0 from `limit` on; on return
// ds holds dS and pr holds Pd = P * M. keep is M's choices for keys
// [0, limit), null without dropout. rowsum(dO * O) is taken as
// sum_j Pd_ij (dO V^T)_ij, its value by O = Pd V: `limit` products instead
// of a pass over the O and dO rows. Past the limit P = 0, so M is moot:
// there dS = 0 * (dP * M - d) is 0, or NaN where dP is not finite, with M
// as 1 (the composition) or 0 (the float32 vectors) alike.
template <class T>
void softmax_backward_row(T* ds, T* pr, const uint8_t* keep, int64_t limit, int64_t keys, T scale) {
  if constexpr (std::is_same_v<T, float>) {
    NVec acc{};
    for (int64_t j = 0; j < limit; j += kRowLanes) {
      // Both masked: a buffer's padding lanes may hold another row's NaN.
      NVec pd = load_row(pr + j, limit - j, 0.0f);
      if (keep != nullptr) pd *= dropout_lanes(keep + j, limit - j, scale);
      acc = cpu::vec::fmadd(pd, load_row(ds + j, limit - j, 0.0f), acc);
    }
    const float d = cpu::vec::sum_lanes(acc);
    for (int64_t j = 0; j < keys; j += kRowLanes) {
      const NVec p = cpu::vec::load_native(pr + j), dp = cpu::vec::load_native(ds + j);
      if (keep != nullptr) {
        const NVec m = dropout_lanes(keep + j, limit - j, scale);
        cpu::vec::store_native(ds + j, p * (dp * m - d));
        cpu::vec::store_native(pr + j, p * m);
      } else {
        cpu::vec::store_native(ds + j, p * (dp - d));
      }
    }
  } else {
    T d = 0;
    for (int64_t j = 0; j < limit; ++j) {
      d += (keep != nullptr ? pr[j] * (keep[j] != 0 ? scale : T(0)) : pr[j]) * ds[j];
    }
    int64_t j = 0;
    if (keep != nullptr) {
      for (; j < limit; ++j) {
        const T m = keep[j] != 0 ? scale : T(0);
        ds[j] = pr[j] * (ds[j] * m - d);
        pr[j] *= m;
      }
    }
    for (; j < keys; ++j) ds[j] = pr[j] * (ds[j] - d);
  }
}

// Rows of a causal block: the GEMMs of a block of query rows stop at the
// last key its last row sees, so the masked upper triangle is mostly never
// computed (about half the GEMM work at L == S). Without a mask there is one
// block.
constexpr int64_t kCausalBlock = 64;

int64_t block_rows(const AttentionShape& a) {
  return a.causal ? kCausalBlock : std::max<int64_t>(a.L, 1);
}

// Heads per task: at least ~2^17 multiply-adds' worth of work, so that tiny
// heads do not pay a parallel region for a few microseconds. With few query
// rows (decoding a token) a head is bound by reading its K and V rows, which
// a long generation's weight stream has pushed out of the caches: a row of
// K or V costs about what 16 query rows' multiply-adds cost, so the cached
// keys of a long context are spread over the threads' memory bandwidth.
int64_t heads_per_task(const AttentionShape& a) {
  constexpr int64_t kRowsPerStreamedRow = 16;
  const int64_t work =
      std::max<int64_t>(std::max(a.L, kRowsPerStreamedRow) * a.S * (a.E + a.Ev), 1);
  return std::max<int64_t>(1, (int64_t(1) << 17) / work);
}

// Rotary attention's rotation by +angle (sign 1) or -angle (sign -1), or
// none for plain attention.
template <class T>
std::optional<RowRotation<T>> rotation(const AttentionShape& a, double sign) {
  if (!a.rotary) return std::nullopt;
  return RowRotation<T>(*a.rotary->tables, sign, a.E, a.rotary->interleaved);
}

// Asks for every cache line of rows [0, rows) of cols elements, ld apart.
template <class T>
void prefetch_rows(const T* p, int64_t rows, int64_t ld, int64_t cols) {
  constexpr int64_t kLine = 64 / int64_t(sizeof(T));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = 0; e < cols; e += kLine) __builtin_prefetch(p + r * ld + e);
  }
}

// q and k as GEMM operands: where they lie, or, for rotary attention,
// rotated into a task's buffers (all of a head's keys, then a block's
// queries at a time), so that the rotated q and k are never written out.
// Row i of q and row i of k are position i (L == S). The rows to rotate are
// prefetched first: the rotation reads one row at a time, mostly from
// beyond L2, and asking for all of them at once overlaps their misses
// (measured, with prefetching v, out and dout as well, which gained
// nothing: bench/HISTORY.md).
template <class T>
class QkOperands {
 public:
  QkOperands(const AttentionShape& a,
             const In<T>& q,
             const In<T>& k,
             const std::optional<RowRotation<T>>& rotate)
      : a_(a), q_(q), k_(k), rotate_(rotate ? &*rotate : nullptr) {
    if (rotate_ != nullptr) {
      keys_.resize(size_t(a.S * a.E));
      queries_.resize(size_t(std::min(block_rows(a), a.L) * a.E));
    }
  }
  // Head n's keys (S, E), ld_keys() apart.
  const T* keys(int64_t n) {
    if (rotate_ == nullptr) return k_[n];
    prefetch_rows(k_[n], a_.S, k_.ld(), a_.E);
    rotate_->rows(k_[n], k_.ld(), keys_.data(), a_.E, 0, a_.S);
    return keys_.data();
  }
  int64_t ld_keys() const { return rotate_ != nullptr ? a_.E : k_.ld(); }
  // Rows [i0, i0 + rows) of head n's queries, ld_queries() apart.
  const T* queries(int64_t n, int64_t i0, int64_t rows) {
    const T* first = q_[n] + i0 * q_.ld();
    if (rotate_ == nullptr) return first;
    prefetch_rows(first, rows, q_.ld(), a_.E);
    rotate_->rows(first, q_.ld(), queries_.data(), a_.E, i0, rows);
    return queries_.data();
  }
  int64_t ld_queries() const { return rotate_ != nullptr ? a_.E : q_.ld(); }

 private:
  const AttentionShape& a_;
  const In<T>& q_;
  const In<T>& k_;
  const RowRotation<T>* rotate_;
  std::vector<T> keys_, queries_;
};

// q (N, L, E), k (N, S, E), v (N, S, Ev) -> out (N, L, Ev), lse (N, L)
// contiguous; with `saved`, also the probabilities and dropout's choices.
template <class T>
void fused_forward(const AttentionShape& a,
                   const In<T>& q,
                   const In<T>& k,
                   const In<T>& v,
                   const Out<T>& out,
                   T* lse,
                   const SavedProbs<T>& saved) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::optional<RowRotation<T>> rotate = rotation<T>(a, 1);
  parallel_for(0, a.N, heads_per_task(a), [&](int64_t begin, int64_t end) {
    const int64_t block = std::min(block_rows(a), a.L), ldp = padded_row<T>(a.S);
    std::vector<T> p(static_cast<size_t>(block * ldp)), maxima(static_cast<size_t>(block)),
        sums(static_cast<size_t>(block));
    DropoutRows dropout(a, block);
    const T scale = dropout_scale<T>(a);
    QkOperands<T> qk(a, q, k, rotate);
    for (int64_t n = begin; n < end; ++n) {
      const T* kn = qk.keys(n);
      for (int64_t i0 = 0; i0 < a.L; i0 += block) {
        const int64_t rows = std::min(block, a.L - i0);
        const int64_t keys = key_limit(i0 + rows - 1, a.L, a.S, a.causal, a.bottom_right);
        cpu::gemm({.trans_b = true,
                   .m = rows,
                   .n = keys,
                   .k = a.E,
                   .a = qk.queries(n, i0, rows),
                   .lda = qk.ld_queries(),
                   .b = kn,
                   .ldb = qk.ld_keys(),
                   .c = p.data(),
                   .ldc = ldp,
                   .alpha = T(a.scale)});
        // The choices go where the backward reads them, if it does.
        if (a.dropout_p > 0) {
          dropout.draw(n, i0, rows, keys,
                       saved.keep != nullptr ? saved.keep + (n * a.L + i0) * a.S : nullptr);
        }
        auto limit_of = [&](int64_t r) {
          return key_limit(i0 + r, a.L, a.S, a.causal, a.bottom_right);
        };
        // The softmax phase by phase (see the row kernels above).
        for (int64_t r = 0; r < rows; ++r) {
          if (limit_of(r) > 0) maxima[size_t(r)] = row_max(p.data() + r * ldp, limit_of(r));
        }
        for (int64_t r = 0; r < rows; ++r) {
          if (limit_of(r) > 0) {
            sums[size_t(r)] = exp_row(p.data() + r * ldp, limit_of(r), keys, maxima[size_t(r)]);
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = i0 + r, limit = limit_of(r);
          T* row = p.data() + r * ldp;
          // A row with no visible key is NaN, as the composed path (and PyTorch).
          if (limit == 0) {
            std::fill_n(row, keys, nan);
            if (saved.probs != nullptr) std::fill_n(saved.probs + (n * a.L + i) * a.S, keys, nan);
            lse[n * a.L + i] = nan;
            continue;
          }
          finish_row(row, limit, keys, T(1) / sums[size_t(r)],
                     saved.probs != nullptr ? saved.probs + (n * a.L + i) * a.S : nullptr,
                     a.dropout_p > 0 ? dropout.keep(r) : nullptr, scale);
          lse[n * a.L + i] = maxima[size_t(r)] + std::log(sums[size_t(r)]);
        }
        T* out_rows = out[n] + i0 * out.ld();
        if (keys == 0) {  // no row of the block sees a key
          for (int64_t i = 0; i < rows; ++i) std::fill_n(out_rows + i * out.ld(), a.Ev, nan);
          continue;
        }
        cpu::gemm({.m = rows,
                   .n = a.Ev,
                   .k = keys,
                   .a = p.data(),
                   .lda = ldp,
                   .b = v[n],
                   .ldb = v.ld(),
                   .c = out_rows,
                   .ldc = out.ld()});
      }
    }
  });
}

// Note [Fused attention]; lse (N, L) contiguous. dk and dv sum over the
// blocks of query rows, in block order.
template <class T>
void fused_backward(const AttentionShape& a,
                    const In<T>& q,
                    const In<T>& k,
                    const In<T>& v,
                    const T* lse,
                    const SavedProbs<const T>& saved,
                    const In<T>& dout,
                    const Out<T>& dq,
                    const Out<T>& dk,
                    const Out<T>& dv) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::optional<RowRotation<T>> rotate = rotation<T>(a, 1);
  const std::optional<RowRotation<T>> unrotate = rotation<T>(a, -1);
  parallel_for(0, a.N, heads_per_task(a), [&](int64_t begin, int64_t end) {
    const int64_t block = std::min(block_rows(a), a.L), ldp = padded_row<T>(a.S);
    std::vector<T> p(size_t(block * ldp)), dp(size_t(block * ldp));
    DropoutRows dropout(a, saved.keep != nullptr ? 0 : block);
    const T scale = dropout_scale<T>(a);
    QkOperands<T> qk(a, q, k, rotate);
    for (int64_t n = begin; n < end; ++n) {
      const T* kn = qk.keys(n);
      const T* vn = v[n];
      bool poisoned = false;
      // dk and dv rows [0, written) hold sums of earlier blocks; a block's
      // GEMMs overwrite (beta = 0) while nothing is written yet, and rows
      // that no block reaches are zeroed at the end, so no row is written
      // twice just to be cleared.
      int64_t written = 0;
      for (int64_t i0 = 0; i0 < a.L; i0 += block) {
        const int64_t rows = std::min(block, a.L - i0);
        const int64_t keys = key_limit(i0 + rows - 1, a.L, a.S, a.causal, a.bottom_right);
        const T* dob = dout[n] + i0 * dout.ld();
        T* dqb = dq[n] + i0 * dq.ld();
        // A row without a visible key has NaN probabilities: as in the
        // composed path (softmax, then where), they make all of dv NaN, while
        // its scores, all masked, pass no gradient to q or k.
        if (key_limit(i0, a.L, a.S, a.causal, a.bottom_right) == 0) poisoned = true;
        if (keys == 0) {
          for (int64_t i = 0; i < rows; ++i) std::fill_n(dqb + i * dq.ld(), a.E, T(0));
          continue;
        }
        const T* qb = qk.queries(n, i0, rows);
        if (saved.probs != nullptr) {
          for (int64_t i = 0; i < rows; ++i) {
            std::copy_n(saved.probs + (n * a.L + i0 + i) * a.S, keys, p.data() + i * ldp);
          }
        } else {
          cpu::gemm({.trans_b = true,
                     .m = rows,
                     .n = keys,
                     .k = a.E,
                     .a = qb,
                     .lda = qk.ld_queries(),
                     .b = kn,
                     .ldb = qk.ld_keys(),
                     .c = p.data(),
                     .ldc = ldp,
                     .alpha = T(a.scale)});
          for (int64_t i = i0; i < i0 + rows; ++i) {
            T* row = p.data() + (i - i0) * ldp;
            const int64_t limit = key_limit(i, a.L, a.S, a.causal, a.bottom_right);
            const T l = lse[n * a.L + i];
            exp_row(row, limit, keys, l);
            if (limit == 0) std::fill_n(row, keys, l);  // NaN, as the forward's row
          }
        }
        cpu::gemm({.trans_b = true,
                   .m = rows,
                   .n = keys,
                   .k = a.Ev,
                   .a = dob,
                   .lda = dout.ld(),
                   .b = vn,
                   .ldb = v.ld(),
                   .c = dp.data(),
                   .ldc = ldp});
        const uint8_t* saved_keep =
            saved.keep != nullptr ? saved.keep + (n * a.L + i0) * a.S : nullptr;
        if (a.dropout_p > 0 && saved_keep == nullptr) dropout.draw(n, i0, rows, keys);
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t limit = key_limit(i0 + i, a.L, a.S, a.causal, a.bottom_right);
          if (limit == 0) {
            std::fill_n(dp.data() + i * ldp, keys, T(0));
            continue;
          }
          // M's choices at (i0 + i, j < limit): saved by the forward or drawn again.
          const uint8_t* keep = nullptr;
          if (a.dropout_p > 0)
            keep = saved_keep != nullptr ? saved_keep + i * a.S : dropout.keep(i);
          softmax_backward_row(dp.data() + i * ldp, p.data() + i * ldp, keep, limit, keys, scale);
        }
        // dst[:keys] (+)= alpha * lhs^T rhs: rows below `written` add to
        // earlier blocks' sums, the rest start fresh.
        auto accumulate = [&](const T* lhs, const T* rhs, int64_t ld_rhs, int64_t cols, T alpha,
                              T* dst, int64_t ld_dst) {
          const int64_t old_rows = std::min(keys, written);
          auto product = [&](int64_t first, int64_t count, T beta) {
            cpu::gemm({.trans_a = true,
                       .m = count,
                       .n = cols,
                       .k = rows,
                       .a = lhs + first,
                       .lda = ldp,
                       .b = rhs,
                       .ldb = ld_rhs,
                       .c = dst + first * ld_dst,
                       .ldc = ld_dst,
                       .alpha = alpha,
                       .beta = beta});
          };
          if (old_rows > 0) product(0, old_rows, T(1));
          if (keys > old_rows) product(old_rows, keys - old_rows, T(0));
        };
        accumulate(p.data(), dob, dout.ld(), a.Ev, T(1), dv[n], dv.ld());
        cpu::gemm({.m = rows,
                   .n = a.E,
                   .k = keys,
                   .a = dp.data(),
                   .lda = ldp,
                   .b = kn,
                   .ldb = qk.ld_keys(),
                   .c = dqb,
                   .ldc = dq.ld(),
                   .alpha = T(a.scale)});
        // Rotary attention: the gradient reaches q through the rotation.
        if (unrotate) {
          unrotate->rows(dqb, dq.ld(), dqb, dq.ld(), i0, rows);
        }
        accumulate(dp.data(), qb, qk.ld_queries(), a.E, T(a.scale), dk[n], dk.ld());
        written = std::max(written, keys);
      }
      if (unrotate) {
        unrotate->rows(dk[n], dk.ld(), dk[n], dk.ld(), 0, written);
      }
      for (int64_t j = written; j < a.S; ++j) {
        std::fill_n(dk[n] + j * dk.ld(), a.E, T(0));
        std::fill_n(dv[n] + j * dv.ld(), a.Ev, T(0));
      }
      if (poisoned) {
        for (int64_t j = 0; j < a.S; ++j) std::fill_n(dv[n] + j * dv.ld(), a.Ev, nan);
      }
    }
  });
}

// The dropout mask M: the draws of Note [Fused attention], scaled.
void fill_dropout_mask(const AttentionShape& a, Tensor& mask) {
  detail::dispatch_floating(mask.dtype(), "scaled_dot_product_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* m = mask.data_ptr<T>();
    const T scale = dropout_scale<T>(a);
    parallel_for(0, a.N, 1, [&](int64_t begin, int64_t end) {
      DropoutRows dropout(a, 1);
      for (int64_t n = begin; n < end; ++n) {
        for (int64_t i = 0; i < a.L; ++i) {
          dropout.draw(n, i, 1, a.S);
          const uint8_t* keep = dropout.keep(0);
          T* row = m + (n * a.L + i) * a.S;
          for (int64_t j = 0; j < a.S; ++j) row[j] = keep[j] != 0 ? scale : T(0);
        }
      }
    });
  });
}

void attention_forward_kernel(const AttentionShape& a,
                              const Tensor& q,
                              const Tensor& k,
                              const Tensor& v,
                              Tensor& out,
                              Tensor& lse,
                              Tensor& probs,
                              Tensor& keep) {
  const char* op = a.rotary ? "rotary_attention" : "scaled_dot_product_attention";
  detail::dispatch_floating(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const SavedProbs<T> saved{probs.defined() ? probs.data_ptr<T>() : nullptr,
                              keep.defined() ? keep.data_ptr<uint8_t>() : nullptr};
    fused_forward<T>(a, In<T>(q), In<T>(k), In<T>(v), Out<T>(out), lse.data_ptr<T>(), saved);
  });
}

void attention_backward_kernel(const AttentionShape& a,
                               const Tensor& q,
                               const Tensor& k,
                               const Tensor& v,
                               const Tensor& lse,
                               const Tensor& probs,
                               const Tensor& keep,
                               const Tensor& dout,
                               Tensor& dq,
                               Tensor& dk,
                               Tensor& dv) {
  detail::dispatch_floating(q.dtype(), "scaled_dot_product_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const SavedProbs<const T> saved{probs.defined() ? probs.data_ptr<T>() : nullptr,
                                    keep.defined() ? keep.data_ptr<uint8_t>() : nullptr};
    fused_backward<T>(a, In<T>(q), In<T>(k), In<T>(v), lse.data_ptr<T>(), saved, In<T>(dout),
                      Out<T>(dq), Out<T>(dk), Out<T>(dv));
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::attention_forward, attention_forward_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::attention_backward, attention_backward_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::attention_dropout_mask, fill_dropout_mask);

}  // namespace STRIDE_CPU_NAMESPACE
