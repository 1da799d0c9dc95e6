// The MPI transport: Open MPI's nonblocking collectives, run by one
// communication thread per process.
//
// Note [The communication thread]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every MPI call of the process happens on one thread, which initialised MPI
// (so MPI_THREAD_FUNNELED suffices, and no other thread can race it). It
// takes collectives from a queue in submission order and runs each with
// Open MPI's blocking call, its fastest (the nonblocking MPI_I* forms go
// through a generic schedule that measured two to four times slower here).
// The submitting thread goes on computing meanwhile, which is how
// DistributedDataParallel's all-reduces overlap backward.
//
// Timeouts are the waiter's: Work::wait() gives up after the group's
// timeout with a DistributedError, and marks the runtime broken. The
// communication thread may be stuck for good inside MPI by then (the other
// rank died or hangs), so a broken runtime is never joined: the process
// aborts the whole job (MPI_Abort) when it leaves the world, instead of
// waiting in MPI_Finalize for a rank that will never come.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>

#include "core/check.h"
#include "distributed/comm_thread.h"
#include "distributed/communicator.h"
#include "stride/profiler.h"

namespace stride::distributed::detail {

namespace {

MPI_Datatype mpi_type(ScalarType t) {
  switch (t) {
    case kBool:
      return MPI_C_BOOL;
    case kUInt8:
      return MPI_UINT8_T;
    case kInt32:
      return MPI_INT32_T;
    case kInt64:
      return MPI_INT64_T;
    case kFloat16:
    case kBFloat16:
      return MPI_UINT16_T;  // moved as bits, never reduced (they reduce in float32)
    case kFloat32:
      return MPI_FLOAT;
    case kFloat64:
      return MPI_DOUBLE;
    case kComplex64:
      return MPI_C_FLOAT_COMPLEX;
    case kComplex128:
      return MPI_C_DOUBLE_COMPLEX;
  }
  return MPI_BYTE;
}

// Bools reduce as logic: sum and max are "any", min is "all" (as torch).
MPI_Op mpi_op(ReduceOp op, ScalarType t) {
  if (t == kBool) return op == ReduceOp::Min ? MPI_LAND : MPI_LOR;
  switch (op) {
    case ReduceOp::Max:
      return MPI_MAX;
    case ReduceOp::Min:
      return MPI_MIN;
    default:
      return MPI_SUM;
  }
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, size_t(length));
}

// Runs `c` to completion; returns MPI's error code.
int run_blocking(const RawCollective& c, MPI_Comm comm) {
  const int count = int(c.count);
  const MPI_Datatype type = mpi_type(c.dtype);
  switch (c.kind) {
    case RawCollective::Kind::AllReduce:
      return MPI_Allreduce(MPI_IN_PLACE, c.recv, count, type, mpi_op(c.op, c.dtype), comm);
    case RawCollective::Kind::Broadcast:
      return MPI_Bcast(c.recv, count, type, c.root, comm);
    case RawCollective::Kind::AllGather:
      return MPI_Allgather(c.send, count, type, c.recv, count, type, comm);
    case RawCollective::Kind::ReduceScatter:
      return MPI_Reduce_scatter_block(c.send, c.recv, count, type, mpi_op(c.op, c.dtype), comm);
    case RawCollective::Kind::Barrier:
      return MPI_Barrier(comm);
  }
  return MPI_SUCCESS;
}

// The communication thread (Note [The communication thread]).
class Runtime {
 public:
  explicit Runtime(std::chrono::milliseconds timeout) : timeout_(timeout) {
    thread_.run_sync([this] {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    });
  }

  // Finalises MPI, or aborts the job when a collective timed out (Note [The
  // communication thread]).
  ~Runtime() {
    if (*broken_) {
      std::fprintf(stderr, "stride: aborting the MPI job after a collective timed out\n");
      std::fflush(nullptr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    thread_.run_sync([] { MPI_Finalize(); });
  }

  void run_sync(std::function<void()> fn) { thread_.run_sync(std::move(fn)); }

  void submit(const RawCollective& c, MPI_Comm comm, std::shared_ptr<WorkState> work) {
    if (*broken_) {
      work->complete(stride::detail::str_cat("[", c.op_name,
                                             "] the process group is broken: an earlier ",
                                             "collective timed out waiting for another rank."));
      return;
    }
    work->timeout = timeout_;
    // A Work may outlive the runtime: it shares the flag, not the runtime.
    work->on_timeout = [broken = broken_] { *broken = true; };
    thread_.enqueue([c, comm, work = std::move(work)] { run_collective(c, comm, *work); });
  }

 private:
  static void run_collective(const RawCollective& c, MPI_Comm comm, WorkState& work) {
    // On this thread's timeline: the collective from start to completion.
    profiler::RecordFunction record(c.op_name);
    const int rc = run_blocking(c, comm);
    if (rc != MPI_SUCCESS) {
      work.complete(
          stride::detail::str_cat("[", c.op_name, "] MPI failed: ", mpi_error_string(rc)));
      return;
    }
    work.complete();
  }

  std::chrono::milliseconds timeout_;
  std::shared_ptr<std::atomic<bool>> broken_ = std::make_shared<std::atomic<bool>>(false);
  CommThread thread_;
};

std::unique_ptr<Runtime>& runtime() {
  static std::unique_ptr<Runtime> r;
  return r;
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}

  void submit(const RawCollective& c, std::shared_ptr<WorkState> work) override {
    if (!runtime()) {
      work->complete(stride::detail::str_cat("[", c.op_name, "] distributed::destroy() has run; ",
                                             "this group can no longer communicate."));
      return;
    }
    runtime()->submit(c, comm_, std::move(work));
  }

  std::unique_ptr<Communicator> split(const std::vector<int>& ranks) override {
    const auto position = std::find(ranks.begin(), ranks.end(), rank_);
    const bool member = position != ranks.end();
    MPI_Comm sub = MPI_COMM_NULL;
    runtime()->run_sync([&] {
      const int rc = MPI_Comm_split(comm_, member ? 0 : MPI_UNDEFINED,
                                    member ? int(position - ranks.begin()) : 0, &sub);
      if (rc != MPI_SUCCESS) throw DistributedError("[new_group] " + mpi_error_string(rc));
    });
    if (!member) return nullptr;
    return std::make_unique<MpiCommunicator>(sub, int(position - ranks.begin()), int(ranks.size()));
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

 private:
  MPI_Comm comm_;
  int rank_;
  int size_;
};

}  // namespace

std::unique_ptr<Communicator> mpi_init_world(std::chrono::milliseconds timeout) {
  runtime() = std::make_unique<Runtime>(timeout);
  int rank = 0, size = 1;
  runtime()->run_sync([&] {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  });
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, rank, size);
}

void mpi_shutdown() {
  runtime() = nullptr;
}

}  // namespace stride::distributed::detail
