// The seven idioms every PyTorch user knows, in stride. Each block is as
// short as its PyTorch twin (shown in the comment above it).
#include <cstdio>

#include <stride/checkpoint.h>
#include <stride/nn.h>
#include <stride/optim.h>
#include <stride/stride.h>

using namespace stride;
namespace F = stride::nn::functional;

int main() {
  // 7. Seeding everything: torch.manual_seed(0)
  manual_seed(0);

  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(8, 32),
                                                std::make_shared<nn::ReLU>(),
                                                std::make_shared<nn::Linear>(32, 4));
  optim::AdamW opt(model->parameters(), optim::adamw_options(1e-2));
  Tensor x = randn({64, 8});
  Tensor y = x.narrow(1, 0, 4).argmax(1);  // a learnable labelling

  // 1. The training loop: model.to(device); opt.zero_grad(); loss = F.cross_entropy(model(x), y);
  //    loss.backward(); clip_grad_norm_(model.parameters(), 1.0); opt.step()
  model->to(Device(kCPU));
  double first = 0, last = 0;
  for (int step = 0; step < 100; ++step) {
    opt.zero_grad();
    Tensor loss = F::cross_entropy((*model)(x), y);
    loss.backward();
    optim::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    // 5. Reading a scalar: loss.item()
    (step == 0 ? first : last) = loss.item<double>();
  }
  std::printf("training loss %.4f -> %.4f\n", first, last);

  // 2. The inference loop: model.eval(); with torch.no_grad(): ...
  model->eval();
  {
    NoGradGuard no_grad;
    Tensor accuracy = (*model)(x).argmax(1).eq(y).to(kFloat32).mean();
    std::printf("accuracy %.3f\n", accuracy.item<double>());
  }
  model->train();

  // 3. Freezing a submodule: for p in model[0].parameters(): p.requires_grad_(False)
  for (Tensor& p : (*model)[0]->parameters()) p.requires_grad_(false);

  // 6. Counting trainable parameters: sum(p.numel() for p in model.parameters() if p.requires_grad)
  std::printf("trainable parameters: %lld of %lld\n",
              static_cast<long long>(model->num_parameters(/*trainable_only=*/true)),
              static_cast<long long>(model->num_parameters()));

  // 4. Saving and loading model + optimizer: torch.save({...}, path); model.load_state_dict(...)
  save_checkpoint("idioms.safetensors", capture_checkpoint(*model, &opt, nullptr, 100));
  restore_checkpoint(load_checkpoint("idioms.safetensors"), *model, &opt, nullptr);
  std::remove("idioms.safetensors");
  return last < first ? 0 : 1;
}
