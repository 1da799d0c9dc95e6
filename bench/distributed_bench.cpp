// Distributed benchmarks, run under mpirun by bench/compare_allreduce:
//
//   distributed_bench allreduce-stride   stride's all_reduce (sum, float32)
//   distributed_bench allreduce-mpi      MPI_Allreduce itself, same sizes
//   distributed_bench ddp CONFIG BUCKET_MB
//                                        a data-parallel training step of the
//                                        correct Llama: backward time, the
//                                        all-reduces hidden behind it, bytes
//
// Each all-reduce mode prints one line per size: "bytes median_seconds".
// The two modes run in separate jobs (stride's communication thread owns
// MPI in its process), which the script alternates and pairs.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama/model.h"
#include "lm/config.h"
#include "lm/registry.h"
#include "lm/train.h"
#include "stride/distributed/ddp.h"
#include "stride/stride.h"

using namespace stride;
using Clock = std::chrono::steady_clock;

namespace {

const std::vector<int64_t> kFloats = {1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24};

int repetitions(int64_t floats) {
  return floats <= (1 << 18) ? 200 : floats <= (1 << 22) ? 20 : 8;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `reduce` (one all-reduce of `floats` float32s) after a warm-up; every
// rank returns the slowest rank's time of each repetition, so all agree.
template <class Reduce, class Barrier>
double time_reduce(int64_t floats, Reduce reduce, Barrier barrier) {
  for (int w = 0; w < 3; ++w) reduce();
  std::vector<double> times;
  for (int r = 0; r < repetitions(floats); ++r) {
    barrier();
    const auto t0 = Clock::now();
    reduce();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return median(times);
}

int allreduce_stride() {
  distributed::init();
  for (int64_t n : kFloats) {
    Tensor t = ones({n});
    const double s = time_reduce(
        n, [&] { distributed::all_reduce(t); }, [] { distributed::barrier(); });
    if (distributed::rank() == 0) std::printf("%lld %.9f\n", (long long)(n * 4), s);
  }
  distributed::destroy();
  return 0;
}

int allreduce_mpi(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int64_t n : kFloats) {
    Tensor t = ones({n});  // the same allocator, so the same alignment, as stride's mode
    const double s = time_reduce(
        n,
        [&] {
          MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        },
        [] { MPI_Barrier(MPI_COMM_WORLD); });
    if (rank == 0) std::printf("%lld %.9f\n", (long long)(n * 4), s);
  }
  MPI_Finalize();
  return 0;
}

// The intervals' total length inside [begin, end].
int64_t overlap_ns(const std::vector<std::pair<int64_t, int64_t>>& intervals,
                   int64_t begin,
                   int64_t end) {
  int64_t total = 0;
  for (const auto& [b, e] : intervals)
    total += std::max<int64_t>(0, std::min(e, end) - std::max(b, begin));
  return total;
}

int ddp_step(const std::string& config_path, double bucket_mb) {
  distributed::init();
  const int rank = distributed::rank(), world = distributed::world_size();
  const lm::RunConfig cfg = lm::load_config(config_path);
  manual_seed(1);
  auto model = lm::build_model(cfg.model);
  distributed::DistributedDataParallel ddp(model, {.bucket_cap_mb = bucket_mb});
  auto optimizer = lm::make_optimizer(*model, cfg.train);
  const int64_t batch = cfg.train.batch_size, context = cfg.model.context;
  Generator gen(5);
  const Tensor ids = randint(0, cfg.model.vocab_size, {batch, context + 1}, kInt64, &gen);
  const auto [b, e] = distributed::shard_rows(batch, rank, world, 0, 0);
  const Tensor x = ids.slice(0, b, e).slice(1, 0, context).contiguous();
  const Tensor y = ids.slice(0, b, e).slice(1, 1, context + 1).contiguous();

  constexpr int kSteps = 12, kWarmup = 2;
  std::vector<double> forward_s, backward_s, comm_s, hidden;
  for (int step = 0; step < kSteps; ++step) {
    profiler::Profiler prof;
    prof.start();
    const auto t0 = Clock::now();
    Tensor loss = model->loss(x, y);
    const auto t1 = Clock::now();
    loss.backward();
    const auto t2 = Clock::now();
    prof.stop();
    optimizer->step();
    optimizer->zero_grad();
    if (step < kWarmup) continue;
    // The backward window on the main thread, and the all-reduces on the
    // communication thread.
    int64_t bw_begin = INT64_MAX, bw_end = 0;
    std::vector<std::pair<int64_t, int64_t>> reduces;
    for (const profiler::Event& ev : prof.events()) {
      if (ev.name.find("Backward") != std::string::npos) {
        bw_begin = std::min(bw_begin, ev.start_ns);
        bw_end = std::max(bw_end, ev.end_ns);
      }
      if (ev.name == "all_reduce") reduces.push_back({ev.start_ns, ev.end_ns});
    }
    int64_t total = 0;
    for (const auto& [rb, re] : reduces) total += re - rb;
    forward_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    backward_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    comm_s.push_back(double(total) * 1e-9);
    hidden.push_back(total > 0 ? double(overlap_ns(reduces, bw_begin, bw_end)) / double(total) : 0);
  }
  if (rank == 0) {
    int64_t bytes = 0;
    for (const Tensor& p : model->parameters()) bytes += int64_t(p.nbytes());
    std::printf(
        "world %d, %lld parameters (%.1f MB of gradients), %zu buckets, batch %lld x %lld\n", world,
        (long long)model->num_parameters(true), double(bytes) / 1e6, ddp.bucket_names().size(),
        (long long)batch, (long long)context);
    std::printf("forward %.2f ms, backward (with the all-reduces it waits for) %.2f ms\n",
                median(forward_s) * 1e3, median(backward_s) * 1e3);
    std::printf("all-reduce time %.2f ms, %.0f%% of it during backward\n", median(comm_s) * 1e3,
                median(hidden) * 100);
    // For bench/compare_allreduce's scaling model.
    std::printf("model: bytes %lld forward_s %.6f backward_s %.6f comm_s %.6f\n", (long long)bytes,
                median(forward_s), median(backward_s), median(comm_s));
  }
  distributed::destroy();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "allreduce-stride") return allreduce_stride();
  if (mode == "allreduce-mpi") return allreduce_mpi(argc, argv);
  if (mode == "ddp" && argc == 4) return ddp_step(argv[2], std::atof(argv[3]));
  std::fprintf(
      stderr, "usage: distributed_bench allreduce-stride | allreduce-mpi | ddp CONFIG BUCKET_MB\n");
  return 2;
}
