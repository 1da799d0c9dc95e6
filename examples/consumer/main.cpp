// Uses an installed stride the way a user's project would.
#include <cstdio>

#include <stride/stride.h>

int main() {
  stride::manual_seed(0);
  stride::Tensor a = stride::randn({4, 3});
  stride::Tensor b = stride::ones({3, 2});
  stride::Tensor c = a.matmul(b).softmax(-1);
  const double total = c.sum().item<double>();
  std::printf("rows of softmax sum to %.4f (expected 4)\n", total);
  return total > 3.999 && total < 4.001 ? 0 : 1;
}
