// The seam between process groups and a transport: a Communicator runs
// collectives on raw contiguous buffers, asynchronously, and completes a
// WorkState; ProcessGroup (process_group.cpp) stages tensors of any layout
// and dtype into such buffers and copies results back. The transports are
// MPI (mpi.cpp) and Gloo (gloo.cpp); NCCL will be another.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stride/distributed.h"

namespace stride::distributed::detail {

struct WorkState {
  const char* op_name = "collective";  // for errors
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;  // the transport has finished (or failed)
  std::string error;  // set on failure
  // Run once, by the first wait() after success, on the waiting thread: the
  // copy-back of staged results (tensor ops never run on the transport's
  // thread). Holds the staged buffers alive until then.
  std::function<void()> finish;
  bool finished = false;
  // How long wait() waits for the transport (zero: forever), and what it
  // calls when that runs out, before throwing.
  std::chrono::milliseconds timeout{0};
  std::function<void()> on_timeout;

  void complete(std::string failure = {});
};

// One collective on raw buffers. `count` is the element count of one rank's
// share: the whole buffer for all_reduce and broadcast, the input of
// all_gather, the output of reduce_scatter.
struct RawCollective {
  enum class Kind { AllReduce, Broadcast, AllGather, ReduceScatter, Barrier };
  Kind kind = Kind::Barrier;
  const char* op_name = "barrier";
  const void* send = nullptr;  // null for in place
  void* recv = nullptr;
  int64_t count = 0;
  ScalarType dtype = kFloat32;  // of the elements on the wire
  ReduceOp op = ReduceOp::Sum;  // never Avg: the group divides
  int root = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  // Starts `c`; completes `work` when it has finished or failed.
  virtual void submit(const RawCollective& c, std::shared_ptr<WorkState> work) = 0;
  // The communicator of the members `ranks` (ranks of this communicator),
  // or null on a rank outside them. Collective over this communicator.
  virtual std::unique_ptr<Communicator> split(const std::vector<int>& ranks) = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
};

// A process group over a communicator (null for a group of one process).
std::shared_ptr<ProcessGroup> make_process_group(std::unique_ptr<Communicator> comm,
                                                 std::vector<int> world_ranks);

// What a launcher that is not MPI's told this process (Note [Launching
// without MPI] in include/stride/distributed.h).
struct EnvLaunch {
  int rank = 0;
  int world_size = 0;
  std::string master_addr;
  int master_port = 0;
};

#ifdef STRIDE_HAS_GLOO
// The Gloo transport (gloo.cpp, built when Gloo is found): joins the world
// of `launch`'s processes through the rendezvous rank 0 serves, and leaves
// it.
std::unique_ptr<Communicator> gloo_init_world(const EnvLaunch& launch,
                                              std::chrono::milliseconds timeout);
void gloo_shutdown();
#endif

#ifdef STRIDE_HAS_MPI
// The MPI transport (mpi.cpp, built when Open MPI is found): joins
// MPI_COMM_WORLD, and leaves it (MPI_Finalize, or MPI_Abort once a
// collective has timed out).
std::unique_ptr<Communicator> mpi_init_world(std::chrono::milliseconds timeout);
void mpi_shutdown();
#endif

}  // namespace stride::distributed::detail
