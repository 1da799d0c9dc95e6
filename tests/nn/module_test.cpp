// nn::Module: registration, PyTorch's naming and order, state_dict round
// trips and errors, modes, to(), zero_grad, hooks, printing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <stride/nn.h>
#include <stride/stride.h>

#include "support/layouts.h"

namespace stride {
namespace {

using Grads = std::vector<Tensor>;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in: " << text;
}

// ---- the nested model of tools/gen_layer_goldens.py, written with stride ----

struct Attention : nn::Module {
  explicit Attention(int64_t dim) {
    wq = register_module("wq", std::make_shared<nn::Linear>(dim, dim, false));
    wk = register_module("wk", std::make_shared<nn::Linear>(dim, dim, false));
    wv = register_module("wv", std::make_shared<nn::Linear>(dim, dim, false));
    wo = register_module("wo", std::make_shared<nn::Linear>(dim, dim, false));
  }
  std::shared_ptr<nn::Linear> wq, wk, wv, wo;
};

struct Block : nn::Module {
  explicit Block(int64_t dim) {
    attn_norm = register_module("attn_norm", std::make_shared<nn::LayerNorm>(dim));
    attn = register_module("attn", std::make_shared<Attention>(dim));
    ffn = register_module(
        "ffn", std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(dim, 2 * dim),
                                                std::make_shared<nn::GELU>(),
                                                std::make_shared<nn::Linear>(2 * dim, dim)));
    bn = register_module("bn", std::make_shared<nn::BatchNorm1d>(dim));
    drop = register_module("drop", std::make_shared<nn::Dropout>(0.1));
  }
  std::shared_ptr<nn::LayerNorm> attn_norm;
  std::shared_ptr<Attention> attn;
  std::shared_ptr<nn::Sequential> ffn;
  std::shared_ptr<nn::BatchNorm1d> bn;
  std::shared_ptr<nn::Dropout> drop;
};

struct Model : nn::Module {
  explicit Model(int64_t vocab = 20, int64_t dim = 8, int64_t layers = 2) {
    tok = register_module("tok", std::make_shared<nn::Embedding>(vocab, dim));
    blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
    for (int64_t i = 0; i < layers; ++i) blocks->push_back(std::make_shared<Block>(dim));
    heads = register_module("heads", std::make_shared<nn::ModuleDict>());
    lm = heads->insert("lm", std::make_shared<nn::Linear>(dim, vocab, false));
    heads->insert("cls", std::make_shared<nn::Linear>(dim, 3));
    scale = register_parameter("scale", ones({1}));
    mask = register_buffer("mask", ones({4, 4}), /*persistent=*/false);
    pos = register_buffer("pos", zeros({4, dim}));
    lm->weight = lm->replace_parameter("weight", tok->weight);
  }
  std::shared_ptr<nn::Embedding> tok;
  std::shared_ptr<nn::ModuleList> blocks;
  std::shared_ptr<nn::ModuleDict> heads;
  std::shared_ptr<nn::Linear> lm;
  Tensor scale, mask, pos;
};

std::vector<std::string> pytorch_names(const std::string& what) {
  static const io::SafetensorsContents file =
      io::load_safetensors(STRIDE_GOLDEN_DIR "/nn_layers.safetensors");
  return nlohmann::json::parse(file.metadata.at("names/" + what)).get<std::vector<std::string>>();
}

TEST(ModuleNaming, NestedModelNamesEqualPyTorchs) {
  Model m;
  EXPECT_EQ(m.named_parameters().keys(), pytorch_names("parameters"));
  EXPECT_EQ(m.named_buffers().keys(), pytorch_names("buffers"));
  EXPECT_EQ(m.state_dict().keys(), pytorch_names("state_dict"));
  EXPECT_EQ(m.named_modules().keys(), pytorch_names("modules"));
  EXPECT_EQ(std::to_string(m.num_parameters()), pytorch_names("num_parameters").at(0));
}

TEST(ModuleNaming, DottedNamesReachDeepParameters) {
  Model m;
  auto params = m.named_parameters();
  ASSERT_TRUE(params.contains("blocks.0.attn.wq.weight"));
  EXPECT_TRUE(params["blocks.0.attn.wq.weight"].is_same(m.blocks->at<Block>(0)->attn->wq->weight));
  EXPECT_TRUE(
      params["blocks.1.ffn.2.bias"].is_same(m.blocks->at<Block>(1)->ffn->at<nn::Linear>(2)->bias));
  EXPECT_EQ(m.named_modules()["blocks.1.attn"].get(), m.blocks->at<Block>(1)->attn.get());
}

TEST(ModuleNaming, OwnParametersComeBeforeChildrenWhateverTheOrder) {
  struct Net : nn::Module {
    Net() {
      register_module("fc", std::make_shared<nn::Linear>(2, 2));
      register_parameter("alpha", ones({1}));
      register_buffer("beta", zeros({1}));
    }
  } net;
  EXPECT_EQ(net.named_parameters().keys(),
            (std::vector<std::string>{"alpha", "fc.weight", "fc.bias"}));
  EXPECT_EQ(net.state_dict().keys(),
            (std::vector<std::string>{"alpha", "beta", "fc.weight", "fc.bias"}));
  EXPECT_EQ(net.named_parameters(/*recurse=*/false).keys(), (std::vector<std::string>{"alpha"}));
  EXPECT_EQ(net.named_children().keys(), (std::vector<std::string>{"fc"}));
}

TEST(ModuleNaming, TiedWeightIsOneParameterWithTwoStateDictEntries) {
  Model m;
  EXPECT_TRUE(m.lm->weight.is_same(m.tok->weight));
  EXPECT_FALSE(m.named_parameters().contains("heads.lm.weight"));
  auto sd = m.state_dict();
  ASSERT_TRUE(sd.contains("heads.lm.weight"));
  EXPECT_EQ(sd["heads.lm.weight"].data_ptr(), sd["tok.weight"].data_ptr());
  // A gradient through either use accumulates into the one tensor.
  Tensor ids = tensor<int64_t>({1, 2});
  m.lm->call(m.tok->call(ids)).sum().backward();
  EXPECT_TRUE(m.tok->weight.grad().defined());
}

TEST(ModuleNaming, SharedModuleIsListedOnce) {
  nn::Sequential seq;
  auto shared = std::make_shared<nn::Linear>(2, 2);
  seq.push_back(shared);
  seq.push_back(std::make_shared<nn::ReLU>());
  seq.push_back(shared);
  EXPECT_EQ(seq.named_parameters().keys(), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(seq.named_modules().keys(), (std::vector<std::string>{"", "0", "1"}));
  EXPECT_EQ(seq.state_dict().size(), 4u);
  EXPECT_EQ(seq.num_parameters(), 6);
}

TEST(ModuleNaming, ClassNameIsTheDefaultName) {
  Model m;
  EXPECT_EQ(m.name(), "Model");
  EXPECT_EQ(nn::Linear(2, 3).name(), "Linear");
  EXPECT_EQ(nn::Module("Custom").name(), "Custom");
}

// ---- registration ----

TEST(ModuleRegistration, RejectsBadAndRepeatedNames) {
  nn::Module m;
  m.register_parameter("w", zeros({2}));
  try {
    m.register_buffer("w", zeros({2}));
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "a parameter named 'w' is already registered"));
  }
  EXPECT_THROW(m.register_parameter("a.b", zeros({2})), ValueError);
  EXPECT_THROW(m.register_parameter("", zeros({2})), ValueError);
  EXPECT_THROW(m.register_module("w", std::make_shared<nn::ReLU>()), ValueError);
  EXPECT_THROW(m.register_module<nn::ReLU>("relu", nullptr), ValueError);
  EXPECT_THROW(m.register_parameter("i", zeros({2}, kInt64)), DTypeError);
  EXPECT_NO_THROW(m.register_parameter("i", zeros({2}, kInt64), /*requires_grad=*/false));
}

TEST(ModuleRegistration, KeepsLeavesAndDetachesNonLeaves) {
  nn::Module m;
  Tensor leaf = randn({3});
  Tensor p = m.register_parameter("leaf", leaf);
  EXPECT_TRUE(p.is_same(leaf));
  EXPECT_TRUE(leaf.requires_grad());

  Tensor w = randn({3}).requires_grad_();
  Tensor derived = w * 2;
  Tensor q = m.register_parameter("derived", derived);
  EXPECT_TRUE(q.is_leaf());
  EXPECT_TRUE(q.requires_grad());
  EXPECT_EQ(q.data_ptr(), derived.data_ptr());

  Tensor frozen = m.register_parameter("frozen", randn({2}), /*requires_grad=*/false);
  EXPECT_FALSE(frozen.requires_grad());
  EXPECT_EQ(m.num_parameters(), 8);
  EXPECT_EQ(m.num_parameters(/*trainable_only=*/true), 6);
}

TEST(ModuleRegistration, UndefinedParameterIsAPlaceholder) {
  nn::Module m;
  m.register_parameter("bias", Tensor());
  EXPECT_TRUE(m.parameters().empty());
  EXPECT_TRUE(m.state_dict().empty());
  EXPECT_THROW(m.register_parameter("bias", zeros({1})), ValueError);
  m.replace_parameter("bias", zeros({1}));
  EXPECT_EQ(m.named_parameters().keys(), (std::vector<std::string>{"bias"}));
}

TEST(ModuleRegistration, ReplaceModuleKeepsThePosition) {
  nn::Sequential seq(std::make_shared<nn::Linear>(2, 3), std::make_shared<nn::ReLU>());
  auto gelu = seq.replace_module("1", std::make_shared<nn::GELU>());
  EXPECT_EQ(seq[1].get(), gelu.get());
  EXPECT_EQ(seq.named_children().keys(), (std::vector<std::string>{"0", "1"}));
  EXPECT_THROW(seq.replace_module("7", std::make_shared<nn::GELU>()), IndexError);
}

TEST(ModuleRegistration, ContainerModulesHaveNoForward) {
  nn::ModuleList list;
  try {
    list.call(zeros({1}));
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_TRUE(contains(e.what(), "[ModuleList] has no single-tensor forward()"));
  }
}

// ---- state_dict ----

struct TwoLayer : nn::Module {
  TwoLayer() {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(4, 8));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(8, 2));
    bn = register_module("bn", std::make_shared<nn::BatchNorm1d>(8));
    register_buffer("scratch", zeros({3}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) override { return fc2->call(bn->call(fc1->call(x)).relu()); }
  std::shared_ptr<nn::Linear> fc1, fc2;
  std::shared_ptr<nn::BatchNorm1d> bn;
};

TEST(ModuleStateDict, RoundTripCopiesValuesIntoTheSameTensors) {
  manual_seed(1);
  TwoLayer a;
  a.call(randn({5, 4}));  // moves bn's running stats
  TwoLayer b;
  Tensor held = b.fc1->weight;
  EXPECT_FALSE(equal(b.fc1->weight, a.fc1->weight));

  auto result = b.load_state_dict(a.state_dict());
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_TRUE(result.unexpected_keys.empty());
  for (const auto& [key, t] : a.state_dict()) {
    EXPECT_TRUE(equal(b.state_dict()[key], t)) << key;
  }
  EXPECT_TRUE(held.is_same(b.fc1->weight));
  EXPECT_TRUE(held.requires_grad());
  EXPECT_EQ(b.bn->num_batches_tracked.item<int64_t>(), 1);
  // Loading copies: the modules do not share memory afterwards.
  EXPECT_NE(b.fc1->weight.data_ptr(), a.fc1->weight.data_ptr());
}

TEST(ModuleStateDict, IsDetachedAndSharesMemory) {
  TwoLayer m;
  auto sd = m.state_dict();
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                                 "bn.weight", "bn.bias", "bn.running_mean",
                                                 "bn.running_var", "bn.num_batches_tracked"}));
  EXPECT_FALSE(sd["fc1.weight"].requires_grad());
  EXPECT_EQ(sd["fc1.weight"].data_ptr(), m.fc1->weight.data_ptr());
  EXPECT_FALSE(sd.contains("scratch"));  // not persistent
  EXPECT_EQ(m.named_buffers().keys(),
            (std::vector<std::string>{"scratch", "bn.running_mean", "bn.running_var",
                                      "bn.num_batches_tracked"}));
}

TEST(ModuleStateDict, StrictLoadListsEveryProblemInOneError) {
  TwoLayer m;
  const Tensor before = m.fc2->weight.clone();
  auto sd = TwoLayer().state_dict();
  sd.erase("fc2.bias");
  sd.erase("bn.running_var");
  sd.insert("head.weight", zeros({2, 2}));
  sd.insert_or_assign("fc1.weight", zeros({4, 8}));
  try {
    m.load_state_dict(sd);
    FAIL() << "expected a StateDictError";
  } catch (const nn::StateDictError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "[TwoLayer] load_state_dict"));
    EXPECT_TRUE(contains(msg, "missing keys (2): fc2.bias, bn.running_var"));
    EXPECT_TRUE(contains(msg, "unexpected keys (1): head.weight"));
    EXPECT_TRUE(contains(msg, "shape mismatches (1): fc1.weight expects (8, 4); got (4, 8)"));
    EXPECT_TRUE(contains(msg, "strict=*/false"));
    EXPECT_TRUE(contains(msg, "Nothing was loaded"));
  }
  EXPECT_TRUE(equal(m.fc2->weight, before));  // validation happens before any copy
}

TEST(ModuleStateDict, NonStrictLoadSkipsKeysButNotShapes) {
  TwoLayer src, dst;
  auto sd = src.state_dict();
  sd.erase("fc2.bias");
  sd.insert("extra", zeros({1}));
  auto result = dst.load_state_dict(sd, /*strict=*/false);
  EXPECT_EQ(result.missing_keys, (std::vector<std::string>{"fc2.bias"}));
  EXPECT_EQ(result.unexpected_keys, (std::vector<std::string>{"extra"}));
  EXPECT_TRUE(equal(dst.fc2->weight, src.fc2->weight));
  EXPECT_FALSE(equal(dst.fc2->bias, src.fc2->bias));

  sd.insert_or_assign("fc2.weight", zeros({3, 3}));
  try {
    dst.load_state_dict(sd, /*strict=*/false);
    FAIL() << "expected a StateDictError";
  } catch (const nn::StateDictError& e) {
    EXPECT_TRUE(contains(e.what(), "fc2.weight expects (2, 8); got (3, 3)"));
    EXPECT_FALSE(contains(e.what(), "missing keys"));
  }
}

TEST(ModuleStateDict, LoadConvertsDtypesAsCopyDoes) {
  TwoLayer src, dst;
  auto sd = src.state_dict();
  sd.insert_or_assign("fc1.weight", sd["fc1.weight"].to(kFloat64));
  dst.load_state_dict(sd);
  EXPECT_EQ(dst.fc1->weight.dtype(), kFloat32);
  EXPECT_TRUE(equal(dst.fc1->weight, src.fc1->weight));
}

TEST(ModuleStateDict, SurvivesASafetensorsFile) {
  TwoLayer src, dst;
  src.call(randn({4, 4}));
  const std::string path = ::testing::TempDir() + "/module_state.safetensors";
  io::save_safetensors(path, src.state_dict().items());
  dst.load_state_dict(io::load_safetensors(path).tensors);
  std::remove(path.c_str());
  for (const auto& [key, t] : src.state_dict()) EXPECT_TRUE(equal(dst.state_dict()[key], t)) << key;
}

// ---- modes ----

TEST(ModuleMode, TrainAndEvalReachEveryDescendant) {
  Model m;
  EXPECT_TRUE(m.is_training());
  m.eval();
  for (const auto& [name, mod] : m.named_modules()) EXPECT_FALSE(mod->is_training()) << name;
  m.blocks->train();
  EXPECT_FALSE(m.is_training());
  EXPECT_TRUE(m.blocks->at<Block>(1)->drop->is_training());
  m.train(true);
  for (const auto& mod : m.modules()) EXPECT_TRUE(mod->is_training());
}

// ---- to() ----

struct Transposed : nn::Module {
  Transposed() {
    w = register_parameter("w", randn({3, 4}).t());  // (4, 3), strides (1, 4)
    steps = register_buffer("steps", zeros({}, kInt64));
    stat = register_buffer("stat", ones({3}));
  }
  Tensor w, steps, stat;
};

TEST(ModuleTo, Float64KeepsEveryHandleValid) {
  auto m = std::make_shared<TwoLayer>();
  Tensor held = m->fc1->weight;  // as an optimizer holds it
  const Tensor values = held.clone();
  m->call(randn({3, 4})).sum().backward();
  const Tensor grad = held.grad().clone();

  m->to(kFloat64);
  EXPECT_TRUE(held.is_same(m->fc1->weight));
  EXPECT_TRUE(held.is_same(m->named_parameters()["fc1.weight"]));
  EXPECT_EQ(held.dtype(), kFloat64);
  EXPECT_TRUE(held.requires_grad());
  EXPECT_TRUE(held.is_leaf());
  EXPECT_TRUE(equal(held, values.to(kFloat64)));
  EXPECT_EQ(held.grad().dtype(), kFloat64);
  EXPECT_TRUE(equal(held.grad(), grad.to(kFloat64)));
  EXPECT_EQ(m->bn->running_mean.dtype(), kFloat64);
  EXPECT_EQ(m->bn->num_batches_tracked.dtype(), kInt64);  // integers keep their dtype

  m->zero_grad();
  Tensor y = m->call(randn({3, 4}, kFloat64));
  EXPECT_EQ(y.dtype(), kFloat64);
  y.sum().backward();
  EXPECT_EQ(held.grad().dtype(), kFloat64);
}

TEST(ModuleTo, KeepsDenseLayoutsAndTensorHooks) {
  Transposed m;
  int hook_calls = 0;
  m.w.register_hook([&](const Tensor& g) {
    ++hook_calls;
    EXPECT_EQ(g.dtype(), kFloat64);
    return Tensor();
  });
  m.to(kFloat64);
  EXPECT_EQ(m.w.dtype(), kFloat64);
  EXPECT_EQ(m.w.strides(), IntArrayRef({1, 4}));
  EXPECT_EQ(m.steps.dtype(), kInt64);
  EXPECT_EQ(m.stat.dtype(), kFloat64);
  (m.w * 2).sum().backward();
  EXPECT_EQ(hook_calls, 1);
  EXPECT_TRUE(equal(m.w.grad(), full({4, 3}, 2.0, kFloat64)));
}

TEST(ModuleTo, RejectsIntegerDtypesAndUnknownDevices) {
  TwoLayer m;
  EXPECT_THROW(m.to(kInt64), ValueError);
  EXPECT_THROW(m.to(Device(kCUDA)), DeviceError);
  EXPECT_NO_THROW(m.to(Device(kCPU)));
  EXPECT_EQ(m.fc1->weight.dtype(), kFloat32);
}

// ---- pack_parameters ----

// Note [Packed parameters]: the values, every handle, gradients and hooks
// survive; the parameters lie one after another in one block, yet each has
// a storage (and a version counter) of its own.
TEST(ModulePack, KeepsEveryHandleAndGivesEachParameterItsOwnStorage) {
  auto m = std::make_shared<TwoLayer>();
  const std::vector<Tensor> held = m->parameters();  // as an optimizer holds them
  std::vector<Tensor> values;
  for (const Tensor& p : held) values.push_back(p.clone());
  m->call(randn({3, 4})).sum().backward();
  const Tensor grad = m->fc1->weight.grad();
  int hook_calls = 0;
  m->fc2->bias.register_hook([&](const Tensor&) {
    ++hook_calls;
    return Tensor();
  });

  m->pack_parameters();
  const std::vector<Tensor> packed = m->parameters();
  ASSERT_EQ(packed.size(), held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_TRUE(packed[i].is_same(held[i])) << i;
    EXPECT_TRUE(equal(held[i], values[i])) << i;
    EXPECT_TRUE(held[i].requires_grad() && held[i].is_leaf()) << i;
    EXPECT_TRUE(held[i].is_contiguous()) << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(held[i].data_ptr()) % kCpuAlignment, 0u) << i;
    if (i > 0) {
      // In parameters() order, each right after the previous one (64-byte aligned).
      const auto prev = reinterpret_cast<uintptr_t>(held[i - 1].data_ptr());
      const size_t step =
          (held[i - 1].nbytes() + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(held[i].data_ptr()), prev + step) << i;
      EXPECT_NE(held[i].storage(), held[i - 1].storage()) << i;
    }
  }
  EXPECT_TRUE(m->fc1->weight.grad().is_same(grad));

  // An in-place change to one parameter leaves what another's graph saved
  // valid: their version counters are separate.
  Tensor loss = (m->fc1->weight * m->fc1->weight).sum();
  {
    NoGradGuard no_grad;
    m->fc2->bias.add_(1.0);
  }
  EXPECT_NO_THROW(loss.backward());
  (m->fc2->bias * 3).sum().backward();
  EXPECT_EQ(hook_calls, 1);
}

TEST(ModulePack, TrainsBitForBitAsUnpackedWithAnOptimizerMadeBefore) {
  manual_seed(3);
  auto plain = std::make_shared<TwoLayer>();
  manual_seed(3);
  auto packed = std::make_shared<TwoLayer>();
  optim::Adam adam_plain(plain->parameters(), optim::AdamOptions(1e-2));
  optim::Adam adam_packed(packed->parameters(), optim::AdamOptions(1e-2));
  packed->pack_parameters();
  const Tensor x = randn({5, 4});
  for (int step = 0; step < 3; ++step) {
    for (auto [m, opt] : {std::pair{plain.get(), &adam_plain}, {packed.get(), &adam_packed}}) {
      opt->zero_grad();
      m->call(x).square().sum().backward();
      opt->step();
    }
  }
  const std::vector<Tensor> a = plain->parameters(), b = packed->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(equal(a[i], b[i])) << i;
}

TEST(ModulePack, TiedParameterIsPackedOnceAndStaysTied) {
  TwoLayer m;
  auto tied = std::make_shared<nn::Linear>(4, 8);
  tied->weight = tied->replace_parameter("weight", m.fc1->weight);
  m.register_module("tied", tied);
  m.pack_parameters();
  EXPECT_TRUE(tied->weight.is_same(m.fc1->weight));
  EXPECT_EQ(tied->weight.data_ptr(), m.fc1->weight.data_ptr());
  EXPECT_EQ(m.parameters().size(), size_t(4 + 2 + 1));  // fc1, fc2, bn's affine; tied's bias
}

// ---- zero_grad ----

TEST(ModuleZeroGrad, SetToNoneClearsGradients) {
  TwoLayer m;
  m.call(randn({3, 4})).sum().backward();
  for (const Tensor& p : m.parameters()) ASSERT_TRUE(p.grad().defined());
  m.zero_grad();
  for (const Tensor& p : m.parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(ModuleZeroGrad, ZeroingKeepsTheGradientTensors) {
  TwoLayer m;
  m.call(randn({3, 4})).sum().backward();
  const Tensor g = m.fc1->weight.grad();
  m.zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(m.fc1->weight.grad().is_same(g));
  for (const Tensor& p : m.parameters()) EXPECT_TRUE(equal(p.grad(), zeros_like(p)));
  m.call(randn({3, 4})).sum().backward();  // accumulates into the zeroed tensor
  EXPECT_GT(m.fc2->bias.grad().abs().sum().item<double>(), 0.0);
}

// ---- hooks ----

TEST(ModuleHooks, PreHookReplacesTheInput) {
  nn::Linear lin(3, 2);
  Tensor x = randn({4, 3});
  auto h = lin.register_forward_pre_hook([](nn::Module&, const Tensor& in) { return in * 2.0; });
  EXPECT_TRUE(testing::close(lin.call(x), lin.forward(x * 2.0)));
  h.remove();
  EXPECT_TRUE(testing::close(lin.call(x), lin.forward(x)));
}

TEST(ModuleHooks, ForwardHookReplacesTheOutputAndSeesTheInput) {
  nn::Linear lin(3, 2);
  Tensor x = randn({4, 3});
  Tensor seen;
  lin.register_forward_hook([&](nn::Module&, const Tensor& in, const Tensor& out) {
    seen = in;
    return out + 1.0;
  });
  EXPECT_TRUE(testing::close(lin.call(x), lin.forward(x) + 1.0));
  EXPECT_TRUE(seen.is_same(x));
}

TEST(ModuleHooks, RunInOrderAndChainReplacements) {
  nn::ReLU relu;
  std::vector<std::string> log;
  relu.register_forward_pre_hook([&](nn::Module&, const Tensor& x) {
    log.push_back("pre1");
    return x + 1.0;
  });
  relu.register_forward_pre_hook([&](nn::Module&, const Tensor& x) {
    log.push_back("pre2");
    return x * 3.0;
  });
  relu.register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) {
    log.push_back("fwd1");  // returns void: keeps the output
  });
  relu.register_forward_hook([&](nn::Module&, const Tensor&, const Tensor& y) {
    log.push_back("fwd2");
    return y - 2.0;
  });
  Tensor y = relu.call(tensor<float>({-5.0f, 1.0f}));
  EXPECT_EQ(log, (std::vector<std::string>{"pre1", "pre2", "fwd1", "fwd2"}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-2.0f, 4.0f}));  // relu((x+1)*3)-2
}

TEST(ModuleHooks, FullBackwardHookSeesGradInputAndGradOutput) {
  nn::Linear lin(3, 2);
  Tensor x = randn({4, 3}).requires_grad_();
  Tensor r = randn({4, 2});
  int calls = 0;
  Grads grad_input, grad_output;
  lin.register_full_backward_hook([&](nn::Module& m, const Grads& gi, const Grads& go) {
    ++calls;
    EXPECT_EQ(&m, &lin);
    grad_input = gi;
    grad_output = go;
  });
  (lin.call(x) * r).sum().backward();
  ASSERT_EQ(calls, 1);
  ASSERT_EQ(grad_input.size(), 1u);
  ASSERT_EQ(grad_output.size(), 1u);
  const Tensor expected = r.matmul(lin.weight.detach());  // d(sum(y * r))/dx
  EXPECT_TRUE(testing::close(grad_output[0], r));
  EXPECT_TRUE(testing::close(grad_input[0], expected, 1e-6, 1e-6));
  EXPECT_TRUE(testing::close(x.grad(), expected, 1e-6, 1e-6));
  // Weight gradients are unaffected by the identity views.
  EXPECT_TRUE(testing::close(lin.weight.grad(), r.t().matmul(x.detach()), 1e-6, 1e-6));
}

TEST(ModuleHooks, FullBackwardHookCanReplaceGradInput) {
  nn::Linear lin(3, 2);
  Tensor x = randn({4, 3}).requires_grad_();
  lin.register_full_backward_hook(
      [](nn::Module&, const Grads& gi, const Grads&) { return Grads{gi[0] * 10.0}; });
  lin.call(x).sum().backward();
  const Tensor plain = ones({4, 2}).matmul(lin.weight.detach());
  EXPECT_TRUE(testing::close(x.grad(), plain * 10.0, 1e-6, 1e-6));
}

TEST(ModuleHooks, FullBackwardHookRunsWhenTheInputNeedsNoGrad) {
  nn::Linear lin(3, 2);
  Grads grad_input, grad_output;
  lin.register_full_backward_hook([&](nn::Module&, const Grads& gi, const Grads& go) {
    grad_input = gi;
    grad_output = go;
  });
  lin.call(randn({4, 3})).sum().backward();
  ASSERT_EQ(grad_input.size(), 1u);
  EXPECT_FALSE(grad_input[0].defined());
  EXPECT_TRUE(testing::close(grad_output[0], ones({4, 2})));
}

TEST(ModuleHooks, HooksOnChildrenFireInsideContainers) {
  auto inner = std::make_shared<nn::Linear>(3, 3);
  nn::Sequential seq(std::make_shared<nn::ReLU>(), inner, std::make_shared<nn::SiLU>());
  int forward_calls = 0, backward_calls = 0;
  inner->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++forward_calls; });
  seq.register_full_backward_hook([&](nn::Module&, const Grads& gi, const Grads&) {
    ++backward_calls;
    EXPECT_EQ(gi[0].sizes(), IntArrayRef({2, 3}));
  });
  Tensor x = randn({2, 3}).requires_grad_();
  seq.call(x).sum().backward();
  EXPECT_EQ(forward_calls, 1);
  EXPECT_EQ(backward_calls, 1);
}

TEST(ModuleHooks, RemovedHooksDoNotRun) {
  nn::Linear lin(3, 2);
  int pre = 0, fwd = 0, bwd = 0;
  auto h1 = lin.register_forward_pre_hook([&](nn::Module&, const Tensor&) { ++pre; });
  auto h2 = lin.register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++fwd; });
  auto h3 =
      lin.register_full_backward_hook([&](nn::Module&, const Grads&, const Grads&) { ++bwd; });
  Tensor x = randn({1, 3}).requires_grad_();
  lin.call(x).sum().backward();
  EXPECT_EQ(std::vector<int>({pre, fwd, bwd}), std::vector<int>({1, 1, 1}));

  Tensor y = lin.call(x);
  h3.remove();  // removed between forward and backward
  y.sum().backward();
  EXPECT_EQ(bwd, 1);
  h1.remove();
  h2.remove();
  h2.remove();  // idempotent
  lin.call(x).sum().backward();
  EXPECT_EQ(std::vector<int>({pre, fwd, bwd}), std::vector<int>({2, 2, 1}));
}

// has_hooks() sees each kind of hook on the module itself, not its children's,
// and forgets a hook once its handle removes it.
TEST(ModuleHooks, HasHooksSeesEachKindUntilRemoved) {
  nn::Sequential seq;
  auto lin = seq.push_back(std::make_shared<nn::Linear>(3, 2));
  EXPECT_FALSE(lin->has_hooks());
  std::vector<HookHandle> handles;
  handles.push_back(lin->register_forward_pre_hook([](nn::Module&, const Tensor&) {}));
  handles.push_back(lin->register_forward_hook([](nn::Module&, const Tensor&, const Tensor&) {}));
  handles.push_back(
      lin->register_full_backward_hook([](nn::Module&, const Grads&, const Grads&) {}));
  EXPECT_FALSE(seq.has_hooks());
  for (HookHandle& h : handles) {
    EXPECT_TRUE(lin->has_hooks());
    h.remove();
  }
  EXPECT_FALSE(lin->has_hooks());
}

TEST(ModuleHooks, HandleMayOutliveTheModule) {
  HookHandle h;
  {
    nn::ReLU relu;
    h = relu.register_forward_hook([](nn::Module&, const Tensor&, const Tensor&) {});
  }
  EXPECT_NO_THROW(h.remove());
}

TEST(ModuleHooks, NoBackwardHookSetupUnderNoGrad) {
  nn::Linear lin(3, 2);
  int calls = 0;
  lin.register_full_backward_hook([&](nn::Module&, const Grads&, const Grads&) { ++calls; });
  NoGradGuard no_grad;
  Tensor y = lin.call(randn({2, 3}));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(calls, 0);
}

// ---- calling convention ----

// The documented pattern for several inputs: an own forward overload, called
// directly (hooks apply to the single-tensor call path only).
struct MaskedScale : nn::Module {
  MaskedScale() { scale = register_parameter("scale", full({1}, 3.0)); }
  using nn::Module::forward;
  Tensor forward(const Tensor& x, const Tensor& mask) { return x.masked_fill(mask, 0.0) * scale; }
  Tensor scale;
};

TEST(ModuleCalling, MultiInputModuleUsesItsOwnForwardOverload) {
  MaskedScale m;
  int hook_calls = 0;
  m.register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++hook_calls; });
  Tensor y = m.forward(tensor<float>({1.0f, 2.0f}), tensor<bool>({true, false}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0.0f, 6.0f}));
  EXPECT_EQ(hook_calls, 0);
  EXPECT_THROW(m.call(zeros({2})), NotImplementedError);
}

TEST(ModuleCalling, ForwardSkipsHooksAndCallRunsThem) {
  nn::ReLU relu;
  int calls = 0;
  relu.register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++calls; });
  Tensor x = randn({3});
  relu.forward(x);
  EXPECT_EQ(calls, 0);
  relu(x);
  relu.call(x);
  EXPECT_EQ(calls, 2);
}

// ---- walks, apply, printing ----

TEST(ModuleWalks, ApplyVisitsChildrenBeforeParents) {
  nn::Sequential seq(std::make_shared<nn::Linear>(2, 2),
                     std::make_shared<nn::Sequential>(std::make_shared<nn::ReLU>()));
  std::vector<std::string> order;
  seq.apply([&](nn::Module& m) { order.push_back(m.name()); });
  EXPECT_EQ(order, (std::vector<std::string>{"Linear", "ReLU", "Sequential", "Sequential"}));
}

TEST(ModuleWalks, ModulesOfAStackModuleIncludeItself) {
  nn::Sequential seq(std::make_shared<nn::ReLU>());
  auto mods = seq.modules();
  ASSERT_EQ(mods.size(), 2u);
  EXPECT_EQ(mods[0].get(), &seq);
  EXPECT_EQ(seq.modules(/*include_self=*/false).size(), 1u);
  EXPECT_EQ(seq.children().size(), 1u);
}

TEST(ModulePrint, MatchesPyTorchsRepr) {
  nn::Sequential seq(
      std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Dropout>(0.1), std::make_shared<nn::LayerNorm>(8),
      std::make_shared<nn::BatchNorm1d>(8), std::make_shared<nn::Embedding>(10, 3),
      std::make_shared<nn::Sequential>(std::make_shared<nn::GELU>(), std::make_shared<nn::SiLU>()),
      std::make_shared<nn::Linear>(2, 2, false));
  std::ostringstream os;
  os << seq;
  // print(torch.nn.Sequential(...)) for the same modules.
  EXPECT_EQ(os.str(),
            "Sequential(\n"
            "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
            "  (1): ReLU()\n"
            "  (2): Dropout(p=0.1, inplace=False)\n"
            "  (3): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (4): BatchNorm1d(8, eps=1e-05, momentum=0.1, affine=True, "
            "track_running_stats=True)\n"
            "  (5): Embedding(10, 3)\n"
            "  (6): Sequential(\n"
            "    (0): GELU(approximate='none')\n"
            "    (1): SiLU()\n"
            "  )\n"
            "  (7): Linear(in_features=2, out_features=2, bias=False)\n"
            ")");
}

// ---- OrderedDict ----

TEST(ModuleOrderedDict, KeepsInsertionOrderAndNamesMissingKeys) {
  nn::OrderedDict<int> d{{"b", 1}, {"a", 2}};
  d.insert("c", 3);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(d["a"], 2);
  EXPECT_THROW(d.insert("a", 5), ValueError);
  d.insert_or_assign("a", 5);
  EXPECT_EQ(d.values(), (std::vector<int>{1, 5, 3}));
  EXPECT_TRUE(d.erase("b"));
  EXPECT_FALSE(d.erase("b"));
  EXPECT_EQ(d["c"], 3);
  try {
    d.at("zz");
    FAIL() << "expected an IndexError";
  } catch (const IndexError& e) {
    EXPECT_TRUE(contains(e.what(), "no key 'zz'; the 2 keys are: a, c"));
  }
}

}  // namespace
}  // namespace stride
