// Training across processes: process groups and collectives on tensors over
// Open MPI (torch.distributed's and mx.distributed's model), and
// DistributedDataParallel (include/stride/distributed/ddp.h).
//
// Note [Process groups]
// ~~~~~~~~~~~~~~~~~~~~~
// `init()` joins the world: under `mpirun -np N` the N processes form one
// group, and so do N processes that another launcher started with the
// environment variables below; without a launcher the world has one process
// and every collective returns at once, so the same program runs with or
// without a launcher (as MLX's mx.distributed does). A collective is submitted by the calling
// thread and runs on the group's communication thread, the only thread that calls MPI; it returns a
// Work handle whose wait() returns once the result is in place (or throws). The blocking free
// functions below wait for it. Each rank of a group must issue the same collectives in the same
// order, as in PyTorch.
//
// Any layout and dtype works: operands that MPI cannot address directly
// (non-contiguous tensors, float16 and bfloat16, which reduce in float32 and
// round once at the end) are staged through a contiguous buffer and copied
// back by wait(). The result of an async collective is therefore only
// defined after wait() has returned.
//
// A collective that does not complete within the group's timeout (a rank
// died or hangs) fails with DistributedError naming the op and the group;
// the group is then broken: later collectives fail at once, and at exit the
// whole job is aborted (MPI_Abort) instead of waiting for the lost rank.
//
// Note [Launching without MPI]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A launcher that is not MPI's (torchrun, a job scheduler's script, two
// shells) starts each process with torch.distributed's variables:
//   RANK         this process's rank, 0 .. WORLD_SIZE-1
//   WORLD_SIZE   how many processes the world has
//   MASTER_ADDR  the address of rank 0's machine (127.0.0.1 on one machine)
//   MASTER_PORT  a free TCP port there
// and LOCAL_WORLD_SIZE, optionally, for the processes sharing a machine's
// cores. The world then runs over Gloo (libgloo-dev), torch.distributed's
// CPU backend: rank 0 serves a rendezvous at MASTER_ADDR:MASTER_PORT where
// the ranks exchange their addresses, then Gloo's TCP transport carries the
// collectives. Everything above holds unchanged: async Work, any layout and
// dtype, sub-groups, the timeout. A rank that cannot reach the rendezvous,
// or whose peers do not all arrive, fails init() with a DistributedError
// after the timeout. Open MPI's variables take precedence: under mpirun the
// world is MPI's.
#pragma once

#include <chrono>
#include <memory>
#include <string_view>
#include <vector>

#include "stride/error.h"
#include "stride/tensor.h"

namespace stride::distributed {

class DistributedError : public Error {
 public:
  using Error::Error;
};

enum class ReduceOp { Sum, Avg, Max, Min };
const char* to_string(ReduceOp op);

namespace detail {
struct WorkState;
}

// The handle of a submitted collective (torch.distributed's Work). A
// default-constructed Work is complete.
class Work {
 public:
  Work() = default;
  explicit Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}
  // Blocks until the collective has completed and its result is in place;
  // throws its DistributedError. Idempotent.
  void wait();
  // True once the communication has finished (wait() may still have a
  // copy-back to do).
  bool is_completed() const;

 private:
  std::shared_ptr<detail::WorkState> state_;
};

// A set of processes that run collectives together. Ranks are the group's
// own (0..size()-1); root arguments are group ranks.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // The world ranks of the members, in group-rank order.
  const std::vector<int>& world_ranks() const { return world_ranks_; }

  // In place: every rank's `t` becomes the reduction over the group. Avg
  // needs a floating-point dtype.
  virtual Work all_reduce(Tensor& t, ReduceOp op = ReduceOp::Sum) = 0;
  // In place: every rank's `t` becomes root's.
  virtual Work broadcast(Tensor& t, int root = 0) = 0;
  // `out` (size() * input.numel() elements, any shape, e.g. [size, ...] or
  // input's shape with the first dim times size()) receives every rank's
  // `input`, in rank order.
  virtual Work all_gather(Tensor& out, const Tensor& input) = 0;
  // `input` holds size() equal chunks (in row-major order); rank r's `out`
  // (input.numel() / size() elements) becomes the reduction of chunk r.
  virtual Work reduce_scatter(Tensor& out, const Tensor& input, ReduceOp op = ReduceOp::Sum) = 0;
  virtual Work barrier() = 0;

 protected:
  ProcessGroup(int rank, int size, std::vector<int> world_ranks)
      : rank_(rank), size_(size), world_ranks_(std::move(world_ranks)) {}

 private:
  int rank_;
  int size_;
  std::vector<int> world_ranks_;
};

struct InitOptions {
  // How long a collective may wait for the other ranks before it fails.
  // STRIDE_DIST_TIMEOUT (seconds) overrides the default.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

// Joins the world (Note [Process groups]). Under an MPI launch with more
// than one local process and no thread count set (STRIDE_NUM_THREADS,
// OMP_NUM_THREADS), each process takes its share of this machine's cores.
// Calling it again is a no-op.
void init(const InitOptions& options = {});
bool is_initialized();
// Leaves the world (MPI_Finalize); runs at exit when not called.
void destroy();
// True when this build has the MPI backend (Open MPI found at configure
// time); without it, mpirun's worlds have size 1.
bool mpi_available();
// True when this build has the Gloo backend (Gloo found at configure time),
// which the environment-variable launcher needs (Note [Launching without
// MPI]).
bool gloo_available();

// What a launcher told this process through its environment, before init():
// how many processes it started (0 when none did) and this one's rank among
// them. An MPI launcher's variables (Open MPI's mpirun, or a PMI one such as
// srun) come first, then WORLD_SIZE and RANK.
int launched_world_size();
int launched_rank();

// The world's; init() first.
ProcessGroup& world();
int rank();
int world_size();

// A group of the given world ranks. Every rank of the world must call it
// (with the same list), as torch.distributed.new_group; ranks outside the
// list get nullptr.
std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks);

// torch.distributed's functions: on `group` (the world when null), waiting
// for the result unless async_op.
Work all_reduce(Tensor& t,
                ReduceOp op = ReduceOp::Sum,
                ProcessGroup* group = nullptr,
                bool async_op = false);
Work broadcast(Tensor& t, int root = 0, ProcessGroup* group = nullptr, bool async_op = false);
Work all_gather(Tensor& out,
                const Tensor& input,
                ProcessGroup* group = nullptr,
                bool async_op = false);
Work reduce_scatter(Tensor& out,
                    const Tensor& input,
                    ReduceOp op = ReduceOp::Sum,
                    ProcessGroup* group = nullptr,
                    bool async_op = false);
void barrier(ProcessGroup* group = nullptr);

// Throws DistributedError on every rank, naming the ranks that differ from
// rank 0, unless `bytes` is the same on all ranks of `group` (compared by a
// 64-bit FNV-1a hash). `what` names the data in the message ("the config").
// Collective.
void check_identical(std::string_view what, std::string_view bytes, ProcessGroup* group = nullptr);

}  // namespace stride::distributed
