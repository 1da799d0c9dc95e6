// torch.fft's transforms and torch.signal.windows, part of the op library
// that stride/ops.h gathers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "stride/tensor.h"

namespace stride {

// ---- discrete Fourier transforms (torch.fft) ----
// Any length: KISS FFT's mixed radix (butterflies of 2 to 5, a generic one
// for larger prime factors, so a large prime length costs O(n^2)).
// n / s resize the transformed dims first (zero padding or trimming); norm
// is "backward" (no scale forward, 1/n inverse), "ortho" (1/sqrt(n) both
// ways) or "forward" (1/n forward). Real inputs of the complex transforms
// become complex64 (complex128 for float64); rfft and ihfft take real
// inputs, irfft and hfft return real outputs of length n (2 (m - 1) from m
// input frequencies by default).
namespace fft {
using OptionalDims = std::optional<std::vector<int64_t>>;
Tensor fft(const Tensor& x,
           std::optional<int64_t> n = std::nullopt,
           int64_t dim = -1,
           std::string_view norm = "backward");
Tensor ifft(const Tensor& x,
            std::optional<int64_t> n = std::nullopt,
            int64_t dim = -1,
            std::string_view norm = "backward");
Tensor rfft(const Tensor& x,
            std::optional<int64_t> n = std::nullopt,
            int64_t dim = -1,
            std::string_view norm = "backward");
Tensor irfft(const Tensor& x,
             std::optional<int64_t> n = std::nullopt,
             int64_t dim = -1,
             std::string_view norm = "backward");
Tensor hfft(const Tensor& x,
            std::optional<int64_t> n = std::nullopt,
            int64_t dim = -1,
            std::string_view norm = "backward");
Tensor ihfft(const Tensor& x,
             std::optional<int64_t> n = std::nullopt,
             int64_t dim = -1,
             std::string_view norm = "backward");
// The n-dimensional forms: dims default to the last s.size() dims when s is
// given, else to every dim (the last two for the *2 forms).
Tensor fftn(const Tensor& x,
            const OptionalDims& s = std::nullopt,
            const OptionalDims& dim = std::nullopt,
            std::string_view norm = "backward");
Tensor ifftn(const Tensor& x,
             const OptionalDims& s = std::nullopt,
             const OptionalDims& dim = std::nullopt,
             std::string_view norm = "backward");
Tensor rfftn(const Tensor& x,
             const OptionalDims& s = std::nullopt,
             const OptionalDims& dim = std::nullopt,
             std::string_view norm = "backward");
Tensor irfftn(const Tensor& x,
              const OptionalDims& s = std::nullopt,
              const OptionalDims& dim = std::nullopt,
              std::string_view norm = "backward");
Tensor hfftn(const Tensor& x,
             const OptionalDims& s = std::nullopt,
             const OptionalDims& dim = std::nullopt,
             std::string_view norm = "backward");
Tensor ihfftn(const Tensor& x,
              const OptionalDims& s = std::nullopt,
              const OptionalDims& dim = std::nullopt,
              std::string_view norm = "backward");
Tensor fft2(const Tensor& x,
            const OptionalDims& s = std::nullopt,
            const std::vector<int64_t>& dim = {-2, -1},
            std::string_view norm = "backward");
Tensor ifft2(const Tensor& x,
             const OptionalDims& s = std::nullopt,
             const std::vector<int64_t>& dim = {-2, -1},
             std::string_view norm = "backward");
Tensor rfft2(const Tensor& x,
             const OptionalDims& s = std::nullopt,
             const std::vector<int64_t>& dim = {-2, -1},
             std::string_view norm = "backward");
Tensor irfft2(const Tensor& x,
              const OptionalDims& s = std::nullopt,
              const std::vector<int64_t>& dim = {-2, -1},
              std::string_view norm = "backward");
Tensor hfft2(const Tensor& x,
             const OptionalDims& s = std::nullopt,
             const std::vector<int64_t>& dim = {-2, -1},
             std::string_view norm = "backward");
Tensor ihfft2(const Tensor& x,
              const OptionalDims& s = std::nullopt,
              const std::vector<int64_t>& dim = {-2, -1},
              std::string_view norm = "backward");
// The sample frequencies of an n-point transform with sample spacing d:
// [0, 1, ..., -(n/2), ..., -1] / (d n), and the non-negative ones for rfft.
Tensor fftfreq(int64_t n, double d = 1.0, TensorOptions options = {});
Tensor rfftfreq(int64_t n, double d = 1.0, TensorOptions options = {});
// x rolled so that frequency 0 is in the middle of each of dim (every dim
// by default); ifftshift undoes it.
Tensor fftshift(const Tensor& x, const OptionalDims& dim = std::nullopt);
Tensor ifftshift(const Tensor& x, const OptionalDims& dim = std::nullopt);
}  // namespace fft

// ---- signal windows (torch.signal.windows; src/ops/windows.cpp) ----
// Windows of length M (empty for 0, a single 1 for 1 where PyTorch's is),
// symmetric (sym) or periodic, float32 or float64 (float32 by default).
namespace signal::windows {
Tensor bartlett(int64_t M, bool sym = true, TensorOptions options = {});
Tensor blackman(int64_t M, bool sym = true, TensorOptions options = {});
Tensor cosine(int64_t M, bool sym = true, TensorOptions options = {});
// exp(-|n - center| / tau); center (periodic windows only) defaults to the middle.
Tensor exponential(int64_t M,
                   std::optional<double> center = std::nullopt,
                   double tau = 1.0,
                   bool sym = true,
                   TensorOptions options = {});
Tensor gaussian(int64_t M, double std = 1.0, bool sym = true, TensorOptions options = {});
// sum_i (-1)^i a_i cos(2 pi i n / (M - 1)) (M for periodic windows).
Tensor general_cosine(int64_t M,
                      const std::vector<double>& a,
                      bool sym = true,
                      TensorOptions options = {});
Tensor general_hamming(int64_t M, double alpha = 0.54, bool sym = true, TensorOptions options = {});
Tensor hamming(int64_t M, bool sym = true, TensorOptions options = {});
Tensor hann(int64_t M, bool sym = true, TensorOptions options = {});
Tensor kaiser(int64_t M, double beta = 12.0, bool sym = true, TensorOptions options = {});
Tensor nuttall(int64_t M, bool sym = true, TensorOptions options = {});
}  // namespace signal::windows

}  // namespace stride
