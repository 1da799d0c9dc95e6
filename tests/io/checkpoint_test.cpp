// Checkpoints: exact resume, atomic saves under a kill, clear errors.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <stride/checkpoint.h>

#include <stride/io.h>
#include <stride/nn.h>
#include <stride/optim.h>
#include <stride/stride.h>
#include "io/safetensors_format.h"
#include "support/torch_python.h"

namespace stride {
namespace {

std::shared_ptr<nn::Sequential> make_model() {
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Linear>(6, 16), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Dropout>(0.25), std::make_shared<nn::Linear>(16, 3));
}

struct TrainingRun {
  std::shared_ptr<nn::Sequential> model = make_model();
  optim::AdamW opt{model->parameters(), optim::adamw_options(3e-3)};
  optim::WarmupCosineLR sched = optim::warmup_cosine(opt, 3, 12);
  std::vector<double> losses;

  // One step on a fixed batch; dropout draws from the default generator, so
  // the RNG state must be part of the checkpoint for the resume to match.
  void step(int64_t i) {
    Generator data(100 + uint64_t(i));
    Tensor x = randn({8, 6}, kFloat32, &data);
    Tensor y = randint(0, 3, {8}, kInt64, &data);
    opt.zero_grad();
    Tensor loss = nn::functional::cross_entropy((*model)(x), y);
    loss.backward();
    optim::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    sched.step();
    losses.push_back(loss.item<double>());
  }
};

// Per process: two suites running at once (two build trees) must not share
// a checkpoint file.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
}

TEST(Checkpoint, ResumeIsBitForBit) {
  manual_seed(1);
  TrainingRun straight;
  for (int64_t i = 0; i < 10; ++i) straight.step(i);

  manual_seed(1);
  TrainingRun first;
  for (int64_t i = 0; i < 5; ++i) first.step(i);
  const std::string path = temp_path("stride_resume.safetensors");
  save_checkpoint(path,
                  capture_checkpoint(*first.model, &first.opt, &first.sched, 5, R"({"d":16})"));

  manual_seed(999);  // a fresh "process": other weights, other random stream
  TrainingRun resumed;
  CheckpointState state = load_checkpoint(path);
  EXPECT_EQ(state.step, 5);
  EXPECT_EQ(state.config, R"({"d":16})");
  restore_checkpoint(state, *resumed.model, &resumed.opt, &resumed.sched);
  for (int64_t i = state.step; i < 10; ++i) resumed.step(i);

  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(resumed.losses[i], straight.losses[5 + i]) << "step " << 5 + i;
  auto a = straight.model->named_parameters(), b = resumed.model->named_parameters();
  for (const auto& [name, p] : a) EXPECT_TRUE(equal(p, b[name])) << name;
  EXPECT_EQ(straight.sched.get_last_lr(), resumed.sched.get_last_lr());
  std::remove(path.c_str());
}

// The second half of ResumeInAFreshProcessIsBitForBit, run by it in a new
// process (this test binary again): loads the checkpoint named by
// $STRIDE_RESUME_CKPT, trains steps 5..9 and saves parameters and losses.
TEST(Checkpoint, ResumeInAFreshProcessChild) {
  const char* path = std::getenv("STRIDE_RESUME_CKPT");
  if (!path) GTEST_SKIP() << "run by ResumeInAFreshProcessIsBitForBit";
  manual_seed(999);
  TrainingRun resumed;
  CheckpointState state = load_checkpoint(path);
  restore_checkpoint(state, *resumed.model, &resumed.opt, &resumed.sched);
  for (int64_t i = state.step; i < 10; ++i) resumed.step(i);
  io::NamedTensors out = resumed.model->state_dict().items();
  out.push_back({"losses", tensor<double>(resumed.losses)});
  io::save_safetensors(std::string(path) + ".result", out);
}

// This test program as a shell command: its file (an emulator answers
// /proc/self/exe with the emulated program's), run through the cross build's
// emulator where there is one.
std::string this_program() {
  const std::string file = std::filesystem::read_symlink("/proc/self/exe").string();
#ifdef STRIDE_TEST_EMULATOR
  return std::string(STRIDE_TEST_EMULATOR) + " " + file;
#else
  return file;
#endif
}

TEST(Checkpoint, ResumeInAFreshProcessIsBitForBit) {
  manual_seed(1);
  TrainingRun straight;
  for (int64_t i = 0; i < 10; ++i) straight.step(i);
  manual_seed(1);
  TrainingRun first;
  for (int64_t i = 0; i < 5; ++i) first.step(i);
  const std::string path = temp_path("stride_fresh_process.safetensors");
  save_checkpoint(path, capture_checkpoint(*first.model, &first.opt, &first.sched, 5));
  // The child runs its one test whatever shard this process is (the TSan job
  // shards the suite through GTEST_SHARD_INDEX, which the child inherits).
  const std::string cmd =
      "env -u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS STRIDE_RESUME_CKPT=" + path + " " +
      this_program() + " --gtest_filter=Checkpoint.ResumeInAFreshProcessChild > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  io::SafetensorsContents result = io::load_safetensors(path + ".result");
  std::vector<double> losses = result.at("losses").to_vector<double>();
  ASSERT_EQ(losses.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(losses[i], straight.losses[5 + i]) << "step " << 5 + i;
  for (const auto& [name, p] : straight.model->named_parameters()) {
    EXPECT_TRUE(equal(p, result.at(name))) << name;
  }
  std::remove(path.c_str());
  std::remove((path + ".result").c_str());
}

TEST(Checkpoint, AKillMidSaveLeavesThePreviousCheckpointLoadable) {
  const std::string path = temp_path("stride_atomic.safetensors");
  auto model = std::make_shared<nn::Linear>(512, 1024);
  save_checkpoint(path, capture_checkpoint(*model, nullptr, nullptr, 1));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    set_num_threads(1);  // no OpenMP pool in a forked child
    auto big = std::make_shared<nn::Linear>(2048, 2048);
    for (int64_t step = 2;; ++step)
      save_checkpoint(path, capture_checkpoint(*big, nullptr, nullptr, step));
  }
  usleep(150 * 1000);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  CheckpointState state;
  ASSERT_NO_THROW(state = load_checkpoint(path));  // the old file or a complete new one
  EXPECT_GE(state.step, 1);
  std::filesystem::remove(path);
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir())) {
    if (entry.path().string().rfind(path + ".tmp", 0) == 0) std::filesystem::remove(entry.path());
  }
}

// PyTorch's safetensors reader opens what stride writes, with the same values.
// Runs when a Python with torch and safetensors is found (make venv).
TEST(Checkpoint, PyTorchReadsIt) {
  const std::string python = testing::torch_python();
  if (python.empty()) GTEST_SKIP() << "no Python with torch and safetensors (make venv)";
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(3, 4),
                                                std::make_shared<nn::Linear>(4, 2, /*bias=*/false));
  for (Tensor& p : model->parameters()) {
    NoGradGuard no_grad;
    p.copy_((arange(p.numel()).to(kFloat64) * 0.25).view(p.sizes()));
  }
  optim::Adam opt(model->parameters());
  const std::string path = temp_path("stride_for_torch.safetensors");
  CheckpointState state = capture_checkpoint(*model, &opt, nullptr, 7, R"({"source":"stride"})");
  save_checkpoint(path, state);
  const std::string script = std::string(STRIDE_SOURCE_DIR) + "/tools/check_checkpoint_torch.py";
  EXPECT_EQ(std::system((python + " " + script + " " + path).c_str()), 0);
  std::remove(path.c_str());
}

TEST(Checkpoint, ClearErrors) {
  const std::string plain = temp_path("stride_plain.safetensors");
  io::save_safetensors(plain, {{"w", ones({2})}});
  try {
    (void)load_checkpoint(plain);
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("not a stride checkpoint"), std::string::npos) << e.what();
  }
  const std::string path = temp_path("stride_wrong_model.safetensors");
  auto small = std::make_shared<nn::Linear>(4, 2);
  save_checkpoint(path, capture_checkpoint(*small, nullptr, nullptr, 0));
  auto other = std::make_shared<nn::Linear>(4, 3);
  try {
    restore_checkpoint(load_checkpoint(path), *other, nullptr, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weight"), std::string::npos) << e.what();
  }
  auto as_double = std::make_shared<nn::Linear>(4, 2);
  as_double->to(kFloat64);
  try {
    restore_checkpoint(load_checkpoint(path), *as_double, nullptr, nullptr);
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("\"weight\""), std::string::npos) << e.what();
  }
  CheckpointState bad;
  bad.config = "{not json";
  EXPECT_THROW(save_checkpoint(path, bad), ValueError);
  std::remove(plain.c_str());
  std::remove(path.c_str());
}

// Rewrites one metadata entry of the checkpoint at `path`.
void set_metadata(const std::string& path, const std::string& key, const std::string& value) {
  io::SafetensorsContents file = io::load_safetensors(path);
  file.metadata[key] = value;
  io::save_safetensors(path, file.tensors, file.metadata);
}

// Numbers that stoll and stoull would take (a sign, a suffix, a wrap) or
// that no run reaches.
TEST(Checkpoint, MalformedNumbersInTheMetadataAreErrors) {
  const std::string path = temp_path("stride_numbers.safetensors");
  auto model = std::make_shared<nn::Linear>(2, 2);
  const CheckpointState good = capture_checkpoint(*model, nullptr, nullptr, 7);
  const std::string seed_json = R"({"default":{"seed":"SEED","offset":"0"}})";
  struct Case {
    std::string key, value, expected;
  };
  const Case cases[] = {
      {"stride.step", "-5", "step \"-5\""},
      {"stride.step", "5abc", "step \"5abc\""},
      {"stride.step", " 5", "step \" 5\""},
      {"stride.step", "", "step \"\""},
      {"stride.step", "9223372036854775807", "expected an integer in [0, 9007199254740992]"},
      {"stride.step", "99999999999999999999999", "step \"99999999999999999999999\""},
      {"stride.rng", std::string(seed_json).replace(seed_json.find("SEED"), 4, "-1"),
       "generator seed \"-1\""},
      {"stride.rng", std::string(seed_json).replace(seed_json.find("SEED"), 4, "0x10"),
       "generator seed \"0x10\""},
  };
  for (const Case& c : cases) {
    save_checkpoint(path, good);
    set_metadata(path, c.key, c.value);
    try {
      (void)load_checkpoint(path);
      ADD_FAILURE() << c.key << " = " << c.value << " was accepted";
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
  save_checkpoint(path, good);
  set_metadata(path, "stride.step", "9007199254740992");
  EXPECT_EQ(load_checkpoint(path).step, int64_t(1) << 53);
  CheckpointState negative = good;
  negative.step = -1;
  EXPECT_THROW(save_checkpoint(path, negative), ValueError);
  std::remove(path.c_str());
}

// The inputs that once got past the loader (fuzz/regressions/checkpoint,
// which `make fuzz` replays too) are refused with an IOError.
TEST(Checkpoint, FuzzRegressionsAreRefused) {
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(STRIDE_SOURCE_DIR "/fuzz/regressions/checkpoint")) {
    SCOPED_TRACE(entry.path().string());
    EXPECT_THROW((void)load_checkpoint(entry.path().string()), IOError);
    ++files;
  }
  EXPECT_GE(files, 4);
  EXPECT_NO_THROW(
      (void)load_checkpoint(STRIDE_SOURCE_DIR "/fuzz/corpus/checkpoint/linear.safetensors"));
}

// Random bytes over a tensor's data load as weights unless checked: each
// tensor of a checkpoint, damaged in turn, is named as corrupt.
TEST(Checkpoint, DamagedTensorBytesAreFoundAndNamed) {
  const std::string path = temp_path("stride_crc.safetensors");
  auto model = std::make_shared<nn::Linear>(3, 2);
  auto opt = optim::Adam(model->parameters(), optim::AdamOptions(0.1));
  model->forward(ones({1, 3})).sum().backward();
  opt.step();
  save_checkpoint(path, capture_checkpoint(*model, &opt, nullptr, 1));
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const io::detail::Header header = io::detail::parse_file_bytes(bytes, path);
  int damaged = 0;
  for (const io::detail::TensorEntry& e : header.entries) {
    if (e.end == e.begin) continue;
    std::string broken = bytes;
    broken[header.data_start + e.begin + (e.end - e.begin) / 2] ^= 0x5a;
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << broken;
    }
    try {
      (void)load_checkpoint(path);
      ADD_FAILURE() << "damage to " << e.name << " went unnoticed";
    } catch (const IOError& err) {
      EXPECT_NE(std::string(err.what()).find("tensor \"" + e.name + "\" is corrupt"),
                std::string::npos)
          << err.what();
    }
    ++damaged;
  }
  EXPECT_GE(damaged, 4);  // weight, bias and Adam's moments
  std::remove(path.c_str());
}

}  // namespace
}  // namespace stride
