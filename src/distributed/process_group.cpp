// Process groups: tensors of any layout and dtype staged onto a
// communicator's raw collectives (Note [Process groups] in
// include/stride/distributed.h), and the world that init() joins.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>

#include "core/check.h"
#include "distributed/communicator.h"
#include "stride/autograd.h"
#include "stride/factory.h"
#include "stride/logging.h"
#include "stride/ops.h"
#include "stride/parallel.h"

namespace stride::distributed {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Avg:
      return "avg";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
  }
  return "?";
}

namespace detail {

void WorkState::complete(std::string failure) {
  {
    std::lock_guard lock(mutex);
    error = std::move(failure);
    done = true;
  }
  done_cv.notify_all();
}

}  // namespace detail

void Work::wait() {
  if (!state_) return;
  std::unique_lock lock(state_->mutex);
  const auto is_done = [&] { return state_->done; };
  if (state_->timeout.count() == 0) {
    state_->done_cv.wait(lock, is_done);
  } else if (!state_->done_cv.wait_for(lock, state_->timeout, is_done)) {
    if (state_->on_timeout) state_->on_timeout();
    throw DistributedError(stride::detail::str_cat(
        "[", state_->op_name, "] timed out after ", double(state_->timeout.count()) / 1000.0,
        " s waiting for the other ranks of its group: a rank has died or hangs. Hint: check the "
        "other ranks' output; STRIDE_DIST_TIMEOUT sets the timeout in seconds."));
  }
  if (!state_->error.empty()) throw DistributedError(state_->error);
  if (!state_->finished) {
    state_->finished = true;
    if (state_->finish) std::exchange(state_->finish, nullptr)();
  }
}

bool Work::is_completed() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mutex);
  return state_->done;
}

namespace {

using detail::RawCollective;
using detail::WorkState;

bool is_16bit_float(ScalarType t) {
  return t == kFloat16 || t == kBFloat16;
}

// The dtype a reduction runs in on the wire: MPI has no 16-bit floats, so
// they reduce in float32 and round once when copied back.
ScalarType reduction_dtype(ScalarType t) {
  return is_16bit_float(t) ? kFloat32 : t;
}

void check_operand(const Tensor& t, const char* op, const char* what) {
  STRIDE_CHECK(t.defined(), ValueError, "[", op, "] ", what, " is undefined.");
  STRIDE_CHECK(t.device().is_cpu(), DeviceError, "[", op, "] ", what, " is on ", t.device().str(),
               "; this build's process groups take CPU tensors.");
  STRIDE_CHECK(t.numel() <= std::numeric_limits<int>::max(), ValueError, "[", op, "] ", what,
               " has ", t.numel(), " elements; a collective takes at most 2^31 - 1.");
  STRIDE_CHECK(!is_complex(t.dtype()), DTypeError, "[", op, "] ", what, " is ",
               to_string(t.dtype()),
               "; collectives take real tensors. Hint: pass view_as_real(t), whose sums are the "
               "complex sums.");
}

void check_reduce_op(ScalarType t, ReduceOp op, const char* name) {
  STRIDE_CHECK(op != ReduceOp::Avg || is_floating_point(t), DTypeError, "[", name,
               "] ReduceOp avg needs a floating-point tensor; got ", to_string(t),
               ". Hint: reduce with sum and divide.");
}

// A contiguous buffer of `t`'s elements in `dtype`: `t` itself when it is one
// (and `reuse` allows), else a fresh copy.
Tensor staged_copy(const Tensor& t, ScalarType dtype, bool reuse = true) {
  if (reuse && t.is_contiguous() && t.dtype() == dtype) return t;
  Tensor buffer = empty(t.sizes(), TensorOptions(dtype));
  buffer.copy_(t);
  return buffer;
}

// A contiguous buffer the transport writes into for `out`: `out` itself when
// it is one, else a fresh one that finish() copies back.
Tensor staged_output(const Tensor& out, ScalarType dtype) {
  if (out.is_contiguous() && out.dtype() == dtype) return out;
  return empty(out.sizes(), TensorOptions(dtype));
}

// Copies a staged result back into `out` (divided by `divisor` for avg) and
// bumps out's version: the transport wrote its memory behind autograd.
std::function<void()> copy_back(Tensor out, Tensor staged, int divisor) {
  return [out, staged, divisor]() mutable {
    NoGradGuard no_grad;
    if (divisor > 1) staged.div_(double(divisor));
    if (!staged.is_same(out)) out.copy_(staged.view(out.sizes()));
    out.storage()->bump_version();
  };
}

class StagedProcessGroup final : public ProcessGroup {
 public:
  StagedProcessGroup(std::unique_ptr<detail::Communicator> comm, std::vector<int> world_ranks)
      : ProcessGroup(comm ? comm->rank() : 0, comm ? comm->size() : 1, std::move(world_ranks)),
        comm_(std::move(comm)) {}

  detail::Communicator* communicator() const { return comm_.get(); }

  Work all_reduce(Tensor& t, ReduceOp op) override {
    check_operand(t, "all_reduce", "tensor");
    check_reduce_op(t.dtype(), op, "all_reduce");
    const ScalarType wire = reduction_dtype(t.dtype());
    Tensor buffer = staged_copy(t, wire);
    RawCollective c{.kind = RawCollective::Kind::AllReduce, .op_name = "all_reduce"};
    c.recv = buffer.data_ptr();
    c.count = t.numel();
    c.dtype = wire;
    c.op = op == ReduceOp::Avg ? ReduceOp::Sum : op;
    return submit(c, copy_back(t, buffer, op == ReduceOp::Avg ? size() : 1));
  }

  Work broadcast(Tensor& t, int root) override {
    check_operand(t, "broadcast", "tensor");
    check_root(root, "broadcast");
    Tensor buffer = staged_copy(t, t.dtype());
    RawCollective c{.kind = RawCollective::Kind::Broadcast, .op_name = "broadcast"};
    c.recv = buffer.data_ptr();
    c.count = t.numel();
    c.dtype = t.dtype();
    c.root = root;
    return submit(c, copy_back(t, buffer, 1));
  }

  Work all_gather(Tensor& out, const Tensor& input) override {
    check_operand(out, "all_gather", "out");
    check_operand(input, "all_gather", "input");
    check_same_dtype(out, input, "all_gather");
    STRIDE_CHECK(out.numel() == input.numel() * size(), ShapeError, "[all_gather] out has ",
                 out.numel(), " elements; a group of ", size(), " gathering ",
                 shape_str(input.sizes()), " needs ", input.numel() * size(), ".");
    const Tensor send = staged_copy(input, input.dtype());
    Tensor recv = staged_output(out, out.dtype());
    RawCollective c{.kind = RawCollective::Kind::AllGather, .op_name = "all_gather"};
    c.send = send.data_ptr();
    c.recv = recv.data_ptr();
    c.count = input.numel();
    c.dtype = input.dtype();
    auto finish = copy_back(out, recv, 1);
    return submit(c, [finish, send] { finish(); });
  }

  Work reduce_scatter(Tensor& out, const Tensor& input, ReduceOp op) override {
    check_operand(out, "reduce_scatter", "out");
    check_operand(input, "reduce_scatter", "input");
    check_same_dtype(out, input, "reduce_scatter");
    check_reduce_op(out.dtype(), op, "reduce_scatter");
    STRIDE_CHECK(input.numel() == out.numel() * size(), ShapeError, "[reduce_scatter] input has ",
                 input.numel(), " elements; a group of ", size(), " scattering into ",
                 shape_str(out.sizes()), " needs ", out.numel() * size(), ".");
    const ScalarType wire = reduction_dtype(out.dtype());
    const Tensor send = staged_copy(input, wire);
    Tensor recv = staged_output(out, wire);
    RawCollective c{.kind = RawCollective::Kind::ReduceScatter, .op_name = "reduce_scatter"};
    c.send = send.data_ptr();
    c.recv = recv.data_ptr();
    c.count = out.numel();
    c.dtype = wire;
    c.op = op == ReduceOp::Avg ? ReduceOp::Sum : op;
    auto finish = copy_back(out, recv, op == ReduceOp::Avg ? size() : 1);
    return submit(c, [finish, send] { finish(); });
  }

  Work barrier() override { return submit(RawCollective{}, nullptr); }

 private:
  void check_root(int root, const char* op) const {
    STRIDE_CHECK(root >= 0 && root < size(), ValueError, "[", op, "] root ", root,
                 " is not a rank of this group of ", size(), ".");
  }

  static void check_same_dtype(const Tensor& out, const Tensor& input, const char* op) {
    STRIDE_CHECK(out.dtype() == input.dtype(), DTypeError, "[", op, "] out is ",
                 to_string(out.dtype()), " but input is ", to_string(input.dtype()), ".");
  }

  // A group of one process has nothing to exchange: the staged input is the
  // result (all_gather and reduce_scatter copy it to out).
  Work submit(const RawCollective& c, std::function<void()> finish) {
    auto state = std::make_shared<WorkState>();
    state->op_name = c.op_name;
    state->finish = std::move(finish);
    if (!comm_) {
      if (c.send && c.recv != c.send) {
        std::memcpy(c.recv, c.send, size_t(c.count) * element_size(c.dtype));
      }
      state->complete();
    } else {
      comm_->submit(c, state);
    }
    Work work(std::move(state));
    return work;
  }

  std::unique_ptr<detail::Communicator> comm_;
};

struct World {
  std::shared_ptr<StagedProcessGroup> group;
  bool uses_mpi = false;
  bool left_mpi = false;  // MPI cannot be initialised twice in a process
  bool uses_gloo = false;
};

World& the_world() {
  static World world;
  return world;
}

std::chrono::milliseconds timeout_from_env(std::chrono::milliseconds fallback) {
  const char* env = std::getenv("STRIDE_DIST_TIMEOUT");
  if (!env || !*env) return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(env, &end);
  STRIDE_CHECK(
      end && *end == '\0' && seconds > 0, ValueError,
      "[distributed::init] STRIDE_DIST_TIMEOUT must be a positive number of seconds; got '", env,
      "'.");
  return std::chrono::milliseconds(int64_t(seconds * 1000));
}

// Under a launcher, N processes share this machine's cores: unless the user
// chose a thread count, each takes its share, so that they do not
// oversubscribe it (Open MPI's and torchrun's names for N).
void share_cores_among_local_ranks() {
  if (std::getenv("STRIDE_NUM_THREADS") || std::getenv("OMP_NUM_THREADS")) return;
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!local) local = std::getenv("LOCAL_WORLD_SIZE");
  const int local_size = local ? std::atoi(local) : 1;
  if (local_size <= 1) return;
  const int cores = int(std::thread::hardware_concurrency());
  set_num_threads(std::max(1, cores / local_size));
}

// An environment variable of the launcher as an integer in [lo, hi].
int env_int(const char* name, int lo, int hi) {
  const char* text = std::getenv(name);
  STRIDE_CHECK(text && *text, DistributedError, "[distributed::init] WORLD_SIZE is set but ", name,
               " is not. Hint: a launcher that is not MPI's sets RANK, WORLD_SIZE, MASTER_ADDR ",
               "and MASTER_PORT for every process.");
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  STRIDE_CHECK(*end == '\0' && errno == 0 && value >= lo && value <= hi, DistributedError,
               "[distributed::init] ", name, " must be an integer in [", lo, ", ", hi, "]; got '",
               text, "'.");
  return int(value);
}

// How many processes an MPI launcher started (0 when none did).
int launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* env = std::getenv(name)) return std::max(1, std::atoi(env));
  }
  return 0;
}

// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (Note [Launching without MPI]).
std::optional<detail::EnvLaunch> env_launch() {
  if (!std::getenv("WORLD_SIZE")) return std::nullopt;
  detail::EnvLaunch launch;
  launch.world_size = env_int("WORLD_SIZE", 1, 1 << 20);
  launch.rank = env_int("RANK", 0, launch.world_size - 1);
  if (launch.world_size == 1) return launch;
  const char* addr = std::getenv("MASTER_ADDR");
  launch.master_addr = addr && *addr ? addr : "";
  STRIDE_CHECK(!launch.master_addr.empty(), DistributedError, "[distributed::init] WORLD_SIZE is ",
               launch.world_size, " but MASTER_ADDR is not ",
               "set. Hint: set it to the address of rank 0's machine (127.0.0.1 on one machine).");
  launch.master_port = env_int("MASTER_PORT", 1, 65535);
  return launch;
}

ProcessGroup& group_or_world(ProcessGroup* group) {
  return group ? *group : world();
}

Work waited(Work work, bool async_op) {
  if (!async_op) work.wait();
  return work;
}

}  // namespace

namespace detail {

std::shared_ptr<ProcessGroup> make_process_group(std::unique_ptr<Communicator> comm,
                                                 std::vector<int> world_ranks) {
  return std::make_shared<StagedProcessGroup>(std::move(comm), std::move(world_ranks));
}

}  // namespace detail

void init(const InitOptions& options) {
  World& w = the_world();
  if (w.group) return;
  const auto timeout = timeout_from_env(options.timeout);
  std::unique_ptr<detail::Communicator> comm;
  const int mpi_launched = launched_by_mpi();
  if (mpi_launched > 0) {
#ifdef STRIDE_HAS_MPI
    STRIDE_CHECK(!w.left_mpi, DistributedError,
                 "[distributed::init] this process already left the MPI world (destroy()); MPI "
                 "cannot be started twice in one process.");
    comm = detail::mpi_init_world(timeout);
    w.uses_mpi = true;
#else
    STRIDE_CHECK(mpi_launched <= 1, DistributedError,
                 "[distributed::init] this process was launched as one of ", mpi_launched,
                 " by an MPI launcher, but this build of stride has no MPI backend. Hint: install "
                 "Open MPI (libopenmpi-dev; `make deps`) and rebuild.");
#endif
  } else if (const std::optional<detail::EnvLaunch> launch = env_launch();
             launch && launch->world_size > 1) {
#ifdef STRIDE_HAS_GLOO
    comm = detail::gloo_init_world(*launch, timeout);
    w.uses_gloo = true;
#else
    STRIDE_CHECK(false, DistributedError, "[distributed::init] WORLD_SIZE is ", launch->world_size,
                 ", but this build of stride has no Gloo backend for ",
                 "launchers that are not MPI's. Hint: install Gloo (libgloo-dev; `make deps`) and "
                 "rebuild, or launch with mpirun.");
#endif
  }
  if (comm) {
    share_cores_among_local_ranks();
    std::atexit(destroy);
  }
  std::vector<int> ranks(size_t(comm ? comm->size() : 1));
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = int(r);
  // A world of one needs no communicator (Note [Process groups]).
  if (comm && comm->size() == 1) comm = nullptr;
  w.group = std::make_shared<StagedProcessGroup>(std::move(comm), std::move(ranks));
}

int launched_world_size() {
  if (const int n = launched_by_mpi()) return n;
  if (const std::optional<detail::EnvLaunch> launch = env_launch()) return launch->world_size;
  return 0;
}

int launched_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* env = std::getenv(name)) return std::atoi(env);
  }
  if (const std::optional<detail::EnvLaunch> launch = env_launch()) return launch->rank;
  return 0;
}

bool is_initialized() {
  return the_world().group != nullptr;
}

void destroy() {
  World& w = the_world();
  w.group = nullptr;
#ifdef STRIDE_HAS_GLOO
  if (w.uses_gloo) {
    w.uses_gloo = false;
    detail::gloo_shutdown();
  }
#endif
#ifdef STRIDE_HAS_MPI
  if (w.uses_mpi) {
    w.uses_mpi = false;
    w.left_mpi = true;
    detail::mpi_shutdown();
  }
#endif
}

bool mpi_available() {
#ifdef STRIDE_HAS_MPI
  return true;
#else
  return false;
#endif
}

bool gloo_available() {
#ifdef STRIDE_HAS_GLOO
  return true;
#else
  return false;
#endif
}

ProcessGroup& world() {
  STRIDE_CHECK(is_initialized(), Error,
               "[distributed] the process group is not initialised. Hint: call "
               "distributed::init() first (it works with or without mpirun).");
  return *the_world().group;
}

int rank() {
  return world().rank();
}

int world_size() {
  return world().size();
}

std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks) {
  auto& w = static_cast<StagedProcessGroup&>(world());
  std::vector<bool> seen(size_t(w.size()), false);
  int position = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    STRIDE_CHECK(r >= 0 && r < w.size() && !seen[size_t(r)], ValueError, "[new_group] rank ", r,
                 " is not a rank of the world (size ", w.size(), ") or appears twice.");
    seen[size_t(r)] = true;
    if (r == w.rank()) position = int(i);
  }
  std::unique_ptr<detail::Communicator> comm;
  if (w.communicator()) comm = w.communicator()->split(ranks);
  if (position < 0) return nullptr;
  if (comm && comm->size() == 1) comm = nullptr;
  return std::make_shared<StagedProcessGroup>(std::move(comm), ranks);
}

Work all_reduce(Tensor& t, ReduceOp op, ProcessGroup* group, bool async_op) {
  return waited(group_or_world(group).all_reduce(t, op), async_op);
}

Work broadcast(Tensor& t, int root, ProcessGroup* group, bool async_op) {
  return waited(group_or_world(group).broadcast(t, root), async_op);
}

Work all_gather(Tensor& out, const Tensor& input, ProcessGroup* group, bool async_op) {
  return waited(group_or_world(group).all_gather(out, input), async_op);
}

Work reduce_scatter(
    Tensor& out, const Tensor& input, ReduceOp op, ProcessGroup* group, bool async_op) {
  return waited(group_or_world(group).reduce_scatter(out, input, op), async_op);
}

void barrier(ProcessGroup* group) {
  group_or_world(group).barrier().wait();
}

void check_identical(std::string_view what, std::string_view bytes, ProcessGroup* group) {
  ProcessGroup& g = group_or_world(group);
  uint64_t hash = 1469598103934665603ull;
  for (char c : bytes) {
    hash ^= uint8_t(c);
    hash *= 1099511628211ull;
  }
  Tensor mine = full({1}, int64_t(hash), TensorOptions(kInt64));
  Tensor all = empty({g.size()}, TensorOptions(kInt64));
  g.all_gather(all, mine).wait();
  const int64_t* h = all.data_ptr<int64_t>();
  std::string differing;
  for (int r = 1; r < g.size(); ++r) {
    if (h[r] != h[0]) differing += (differing.empty() ? "" : ", ") + std::to_string(r);
  }
  STRIDE_CHECK(differing.empty(), DistributedError, "[check_identical] ", what, " of rank(s) ",
               differing, " differs from rank 0's. Hint: every rank must start from the same ",
               "files and settings.");
}

}  // namespace stride::distributed
