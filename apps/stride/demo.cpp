// The main job until the Llama lands: a small tour of the tensor core that
// trains a linear least-squares model by hand-written gradient descent.
#include <cstdio>

#include <stride/stride.h>

int main() {
  using namespace stride;
  manual_seed(0);
  // y = x @ w_true + noise, fit w by gradient descent on the mean squared error.
  const int64_t n = 512, d = 16;
  Tensor x = randn({n, d});
  Tensor w_true = randn({d, 1});
  Tensor y = x.matmul(w_true) + randn({n, 1}) * 0.01;
  Tensor w = zeros({d, 1});
  for (int step = 0; step <= 200; ++step) {
    Tensor err = x.matmul(w) - y;
    Tensor loss = (err * err).mean();
    Tensor grad = x.t().matmul(err) * (2.0 / double(n));
    w.sub_(grad * 0.1);
    if (step % 50 == 0) std::printf("step %3d  mse %.6f\n", step, loss.item<double>());
  }
  std::printf("max |w - w_true| = %.5f\n", (w - w_true).abs().max().item<double>());
  std::printf("softmax of the first row of x:\n%s\n", x[0].softmax(0).str().c_str());
  return 0;
}
