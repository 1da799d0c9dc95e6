// Weights cross between stride and PyTorch's own model code with the same
// logits, in both directions (tools/torch_roundtrip.py runs the PyTorch half,
// on tools/torch_llama.py's models):
//   * stride -> PyTorch: lm::save_weights (what `stride export` writes)
//     read by PyTorch's safetensors reader, loaded strictly into the PyTorch
//     model of the file's own "stride.config" metadata;
//   * PyTorch -> stride: a state dict PyTorch initialised and saved as plain
//     safetensors (no stride metadata), built by lm::build_with_weights
//     (what `--weights FILE --config C` does).
// Skipped when no Python with torch is found (tests/support/torch_python.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "llama/model.h"
#include "lm/config.h"
#include "lm/registry.h"
#include "lm/weights.h"
#include "stride/autograd.h"
#include "stride/generator.h"
#include "stride/io.h"
#include "stride/ops.h"
#include "support/temp_dir.h"
#include "support/torch_python.h"

namespace stride::llama {
namespace {

// The model layer (models/lm): configs, training and generation, tested
// here with the Llama.
using namespace ::stride::lm;

// Two float32 forwards of the same weights, summed in different orders: the
// largest logit difference relative to the largest logit.
constexpr double kTolerance = 1e-5;

int run_roundtrip_script(const std::string& python, const std::string& args) {
  std::string command = python;
  command.append(" " STRIDE_SOURCE_DIR "/tools/torch_roundtrip.py ").append(args);
  return std::system(command.c_str());
}

RunConfig small_config(const std::string& arch) {
  RunConfig config;
  config.model.arch = arch;
  config.model.d_model = 64;
  config.model.n_heads = 4;
  config.model.n_layers = 2;
  config.model.context = 12;
  // The article's attention dropout stays on in eval mode (the article's
  // bug); PyTorch's model has none to match.
  config.model.dropout = 0;
  config.train.seed = 3;
  return config;
}

void check_stride_export_runs_in_pytorch(const std::string& arch) {
  const std::string python = testing::torch_python();
  if (python.empty()) GTEST_SKIP() << "no Python with torch and safetensors (make venv)";
  const RunConfig config = small_config(arch);
  manual_seed(config.train.seed);
  auto model = build_model(config.model);
  model->eval();
  const Tensor ids = randint(0, config.model.vocab_size, {2, config.model.context});
  Tensor logits;
  {
    NoGradGuard no_grad;
    logits = model->forward(ids);
  }
  testing::TempDir dir;
  const std::string weights = (dir.path() / "exported.safetensors").string();
  const std::string expected = (dir.path() / "expected.safetensors").string();
  save_weights(weights, *model, config, {{"stride.tokenizer", "{}"}});
  io::save_safetensors(expected, {{"ids", ids}, {"logits", logits}});
  EXPECT_EQ(run_roundtrip_script(python, "check-export " + weights + " " + expected), 0)
      << "PyTorch's logits differ from stride's on " << arch;
}

TEST(TorchRoundTrip, StrideExportOfTheLlamaRunsInPyTorch) {
  check_stride_export_runs_in_pytorch("llama");
}

TEST(TorchRoundTrip, StrideExportOfTheArticleLlamaRunsInPyTorch) {
  check_stride_export_runs_in_pytorch("article_llama");
}

void check_pytorch_weights_run_in_stride(const std::string& arch) {
  const std::string python = testing::torch_python();
  if (python.empty()) GTEST_SKIP() << "no Python with torch and safetensors (make venv)";
  const RunConfig config = small_config(arch);
  testing::TempDir dir;
  const std::string config_path = (dir.path() / "config.json").string();
  const std::string weights = (dir.path() / "torch.safetensors").string();
  const std::string expected = (dir.path() / "expected.safetensors").string();
  std::ofstream(config_path) << to_json(config);
  ASSERT_EQ(run_roundtrip_script(python, "make " + config_path + " " + weights + " " + expected),
            0);

  io::SafetensorsContents file = io::load_safetensors(weights);
  EXPECT_EQ(file.metadata.count("stride.config"), 0u) << "PyTorch's file is plain safetensors";
  auto model = build_with_weights(config, state_dict_from(std::move(file)), weights);
  model->eval();
  const io::SafetensorsContents want = io::load_safetensors(expected);
  Tensor logits;
  {
    NoGradGuard no_grad;
    logits = model->forward(want.at("ids"));
  }
  const Tensor& torch_logits = want.at("logits");
  ASSERT_EQ(logits.sizes(), torch_logits.sizes());
  const double err = (logits.to(kFloat64) - torch_logits.to(kFloat64)).abs().max().item<double>() /
                     torch_logits.to(kFloat64).abs().max().item<double>();
  EXPECT_LE(err, kTolerance) << "stride's logits on PyTorch's weights (" << arch << ")";
}

TEST(TorchRoundTrip, PyTorchWeightsOfTheLlamaRunInStride) {
  check_pytorch_weights_run_in_stride("llama");
}

TEST(TorchRoundTrip, PyTorchWeightsOfTheArticleLlamaRunInStride) {
  check_pytorch_weights_run_in_stride("article_llama");
}

}  // namespace
}  // namespace stride::llama
