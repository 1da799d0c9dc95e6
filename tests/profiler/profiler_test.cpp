// The profiler: a disabled profiler records nothing, the table's totals match
// the events, and the trace nests properly.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include <stride/profiler.h>
#include <stride/stride.h>

namespace stride {
namespace {

void small_training_step() {
  Tensor w = randn({16, 8}).requires_grad_();
  Tensor x = randn({4, 16});
  Tensor loss = x.matmul(w).tanh().log_softmax(-1).mean();
  loss.backward();
}

TEST(Profiler, RecordsNothingWhenOff) {
  EXPECT_FALSE(profiler::is_enabled());
  small_training_step();
  profiler::Profiler prof;
  prof.start();
  EXPECT_TRUE(profiler::is_enabled());
  prof.stop();
  EXPECT_FALSE(profiler::is_enabled());
  EXPECT_TRUE(prof.events().empty());  // the step before start() left nothing behind
}

TEST(Profiler, RecordsOpsAndBackwardNodesWithShapes) {
  profiler::Profiler prof({.record_shapes = true});
  prof.start();
  small_training_step();
  prof.stop();
  std::map<std::string, int> names;
  for (const auto& e : prof.events()) {
    names[e.name]++;
    EXPECT_LE(e.start_ns, e.end_ns);
    EXPECT_GE(e.self_ns, 0);
    EXPECT_LE(e.self_ns, e.end_ns - e.start_ns);
  }
  EXPECT_GE(names["matmul"], 1);
  EXPECT_GE(names["tanh"], 1);
  EXPECT_GE(names["MatmulBackward"], 1);
  EXPECT_GE(names["TanhBackward"], 1);
  bool saw_shapes = false;
  for (const auto& e : prof.events())
    saw_shapes = saw_shapes || e.shapes.find("4, 16)") != std::string::npos;
  EXPECT_TRUE(saw_shapes);
  profiler::Profiler a;
  profiler::Profiler b;
  a.start();
  EXPECT_THROW(b.start(), ValueError);
  a.stop();
}

TEST(Profiler, TableTotalsMatchTheEvents) {
  profiler::Profiler prof;
  prof.start();
  for (int i = 0; i < 3; ++i) small_training_step();
  prof.stop();
  int64_t self_sum = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> by_name;  // calls, total
  for (const auto& e : prof.events()) {
    self_sum += e.self_ns;
    by_name[e.name].first += 1;
    by_name[e.name].second += e.end_ns - e.start_ns;
  }
  int64_t table_self = 0;
  const profiler::KeyAverages averages = prof.key_averages();
  for (const auto& r : averages.rows()) {
    table_self += r.self_ns;
    EXPECT_EQ(r.calls, by_name[r.name].first) << r.name;
    EXPECT_EQ(r.total_ns, by_name[r.name].second) << r.name;
  }
  EXPECT_EQ(table_self, self_sum);
  const std::string table = prof.key_averages().table("self_cpu_time_total", 5);
  EXPECT_NE(table.find("Self CPU %"), std::string::npos) << table;
  EXPECT_NE(table.find("# Calls"), std::string::npos) << table;
  EXPECT_THROW((void)prof.key_averages().table("wall_time"), ValueError);
}

TEST(Profiler, ChromeTraceIsWellFormedAndNested) {
  profiler::Profiler prof;
  prof.start();
  small_training_step();
  prof.stop();
  const std::string path = ::testing::TempDir() + "stride_trace.json";
  prof.export_chrome_trace(path);
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  const auto& events = j.at("traceEvents");
  ASSERT_EQ(events.size(), prof.events().size());
  // On one thread, two events are either disjoint or one contains the other.
  for (size_t a = 0; a < events.size(); ++a) {
    EXPECT_EQ(events[a].at("ph"), "X");
    const double a0 = events[a].at("ts"), a1 = a0 + double(events[a].at("dur"));
    for (size_t b = a + 1; b < events.size(); ++b) {
      if (events[a].at("tid") != events[b].at("tid")) continue;
      const double b0 = events[b].at("ts"), b1 = b0 + double(events[b].at("dur"));
      const bool disjoint = a1 <= b0 || b1 <= a0;
      const bool nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
      EXPECT_TRUE(disjoint || nested) << events[a].at("name") << " vs " << events[b].at("name");
    }
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace stride

namespace stride {
namespace {

// Optimizer steps and the time a loop waits for its DataLoader are scopes of
// their own, with the op events of the update nested inside the step.
TEST(Profiler, RecordsOptimizerStepsAndDataLoaderWaits) {
  Tensor w = randn({8, 8}).requires_grad_();
  optim::AdamW opt({w});
  auto ds = std::make_shared<data::TensorDataset>(std::vector<Tensor>{randn({16, 8})});
  data::DataLoader loader(ds, {.batch_size = 4, .num_workers = 1});
  profiler::Profiler prof;
  prof.start();
  for (auto& batch : loader) {
    opt.zero_grad();
    batch[0].matmul(w).sum().backward();
    opt.step();
  }
  prof.stop();
  std::map<std::string, int> names;
  for (const auto& e : prof.events()) names[e.name]++;
  EXPECT_EQ(names["Optimizer.step#AdamW.step"], 4);
  EXPECT_GE(names["DataLoader.wait"], 1);
}

}  // namespace
}  // namespace stride

namespace stride {
namespace {

// The fused nn ops are op dispatches too: each forward is a scope, its
// backward a node.
TEST(Profiler, RecordsTheFusedNnOps) {
  namespace F = nn::functional;
  Tensor x = randn({2, 3, 4, 8}).requires_grad_(), w = randn({8, 8}).requires_grad_();
  profiler::Profiler prof;
  prof.start();
  Tensor h = F::rms_norm(F::linear(x, w), Tensor());
  Tensor q = F::rotary_embedding(h);
  Tensor a = F::scaled_dot_product_attention(q, q, h, {}, 0.0, true);
  Tensor y = F::swiglu(a, h);
  F::cross_entropy(y.reshape({-1, 8}), zeros({24}, kInt64)).backward();
  prof.stop();
  // Each call is one top-level span; an op a backward runs is nested in its
  // node's span (rope's backward is the rotation by the opposite angle).
  std::map<std::string, int> top_level, nested;
  for (const auto& e : prof.events()) (e.depth == 0 ? top_level : nested)[e.name]++;
  for (const char* op :
       {"linear", "rms_norm", "rotary_embedding", "scaled_dot_product_attention", "swiglu",
        "cross_entropy", "LinearBackward", "SwigluBackward", "RotaryEmbeddingBackward"}) {
    EXPECT_EQ(top_level[op], 1) << op;
  }
  EXPECT_EQ(nested["rotary_embedding"], 1);
}

// kthvalue and mode pick positions with a kernel of their own and gather the
// values there: each call is still one span named after the op, around the
// ops it runs.
TEST(Profiler, RecordsKthvalueAndModeAsOneSpanEach) {
  const Tensor x = randn({3, 5});
  profiler::Profiler prof;
  prof.start();
  kthvalue(x, 2, 1);
  mode(x, 0);
  prof.stop();
  std::map<std::string, int> top_level;
  for (const auto& e : prof.events()) {
    if (e.depth == 0) top_level[e.name]++;
  }
  EXPECT_EQ(top_level["kthvalue"], 1);
  EXPECT_EQ(top_level["mode"], 1);
  EXPECT_EQ(top_level.size(), 2u) << "the gather under each op is nested in its span";
}

}  // namespace
}  // namespace stride
