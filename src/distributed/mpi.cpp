// The MPI transport: Open MPI's nonblocking collectives, run by one
// communication thread per process.
//
// Note [The communication thread]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every MPI call of the process happens on one thread, which initialised MPI
// (so MPI_THREAD_FUNNELED suffices, and no other thread can race it). It
// takes collectives from a queue in submission order, starts each with
// MPI_I*, and polls MPI_Test until it completes. Polling instead of a
// blocking call is what makes two things possible: the submitting thread
// goes on computing while the transfer runs (DistributedDataParallel's
// all-reduces overlap backward), and a collective that other ranks never
// join fails after the timeout instead of hanging. The poll spins briefly,
// then sleeps in growing steps: with one core per rank, a spinning thread
// would take the core that backward needs.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <thread>

#include "core/check.h"
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

MPI_Request start(const RawCollective& c, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int count = int(c.count);
  const MPI_Datatype type = mpi_type(c.dtype);
  int rc = MPI_SUCCESS;
  switch (c.kind) {
    case RawCollective::Kind::AllReduce:
      rc = MPI_Iallreduce(MPI_IN_PLACE, c.recv, count, type, mpi_op(c.op, c.dtype), comm, &request);
      break;
    case RawCollective::Kind::Broadcast:
      rc = MPI_Ibcast(c.recv, count, type, c.root, comm, &request);
      break;
    case RawCollective::Kind::AllGather:
      rc = MPI_Iallgather(c.send, count, type, c.recv, count, type, comm, &request);
      break;
    case RawCollective::Kind::ReduceScatter:
      rc = MPI_Ireduce_scatter_block(c.send, c.recv, count, type, mpi_op(c.op, c.dtype), comm,
                                     &request);
      break;
    case RawCollective::Kind::Barrier:
      rc = MPI_Ibarrier(comm, &request);
      break;
  }
  if (rc != MPI_SUCCESS) throw DistributedError(mpi_error_string(rc));
  return request;
}

// The communication thread (Note [The communication thread]).
class Runtime {
 public:
  explicit Runtime(std::chrono::milliseconds timeout) : timeout_(timeout) {
    thread_ = std::thread([this] { loop(); });
    run_sync([this] {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    });
  }

  // Finalises MPI, or aborts the job when a collective timed out (the lost
  // rank would never join MPI_Finalize).
  ~Runtime() {
    run_sync([this] {
      if (broken_) {
        std::fprintf(stderr, "stride: aborting the MPI job after a collective timed out\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      MPI_Finalize();
    });
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  // Runs `fn` on the communication thread and waits for it.
  void run_sync(std::function<void()> fn) {
    auto work = std::make_shared<WorkState>();
    enqueue([fn = std::move(fn), work] {
      std::string error;
      try {
        fn();
      } catch (const std::exception& e) {
        error = e.what();
      }
      work->complete(std::move(error));
    });
    std::unique_lock lock(work->mutex);
    work->done_cv.wait(lock, [&] { return work->done; });
    if (!work->error.empty()) throw DistributedError(work->error);
  }

  void submit(const RawCollective& c, MPI_Comm comm, std::shared_ptr<WorkState> work) {
    enqueue([this, c, comm, work = std::move(work)] { run_collective(c, comm, *work); });
  }

 private:
  void enqueue(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  void run_collective(const RawCollective& c, MPI_Comm comm, WorkState& work) {
    if (broken_) {
      work.complete(detail_str("[", c.op_name, "] the process group is broken: an earlier ",
                               "collective timed out waiting for another rank."));
      return;
    }
    // On this thread's timeline: from the start to the completion.
    profiler::RecordFunction record(c.op_name);
    MPI_Request request = MPI_REQUEST_NULL;
    try {
      request = start(c, comm);
    } catch (const DistributedError& e) {
      work.complete(detail_str("[", c.op_name, "] MPI failed: ", e.what()));
      return;
    }
    const auto began = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(10);
    for (int polls = 0;; ++polls) {
      int done = 0;
      const int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        work.complete(detail_str("[", c.op_name, "] MPI failed: ", mpi_error_string(rc)));
        return;
      }
      if (done) break;
      const auto waited = std::chrono::steady_clock::now() - began;
      if (waited > timeout_) {
        broken_ = true;
        work.complete(detail_str(
            "[", c.op_name, "] timed out after ",
            std::chrono::duration_cast<std::chrono::milliseconds>(timeout_).count() / 1000.0,
            " s waiting for the other ranks of its group: a rank has died or hangs. Hint: check "
            "the other ranks' output; "
            "STRIDE_DIST_TIMEOUT sets the timeout in seconds."));
        return;
      }
      if (polls < 200) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(500));
      }
    }
    work.complete();
  }

  template <typename... Args>
  static std::string detail_str(const Args&... args) {
    return stride::detail::str_cat(args...);
  }

  std::chrono::milliseconds timeout_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::atomic<bool> broken_{false};
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
