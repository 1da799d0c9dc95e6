// The Gloo transport: the world of processes started without MPI, by any
// launcher that sets the environment variables (Note [Launching without
// MPI] in include/stride/distributed.h).
//
// Gloo (Debian's libgloo-dev, the CPU backend of torch.distributed) moves
// the data over its TCP transport; ranks find each other through the
// rendezvous store rank 0 serves (tcp_store.h). As with MPI, one
// communication thread per process runs the collectives in submission
// order, each to completion (Note [The communication thread] in mpi.cpp), so
// DistributedDataParallel's all-reduces overlap backward. Gloo's own timeout
// (the group's) bounds every collective: a rank that died closes its
// connections and the others fail at once; one that hangs makes them fail
// after the timeout. Either way the collective's Work throws a
// DistributedError, and the group is broken: later collectives fail at once.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "core/check.h"
#include "distributed/comm_thread.h"
#include "distributed/communicator.h"
#include "distributed/tcp_store.h"
#include "stride/profiler.h"

namespace stride::distributed::detail {

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <class T>
ReduceFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max:
      return &gloo::max<T>;
    case ReduceOp::Min:
      return &gloo::min<T>;
    default:
      return &gloo::sum<T>;
  }
}

// Calls fn(T{}) with the C++ type Gloo moves `dtype`'s elements as: 16-bit
// floats as their bits (they are never reduced: the group reduces them in
// float32), bools as bytes.
template <class Fn>
void with_wire_type(ScalarType dtype, Fn&& fn) {
  switch (dtype) {
    case kBool:
    case kUInt8:
      return fn(uint8_t{});
    case kInt32:
      return fn(int32_t{});
    case kInt64:
      return fn(int64_t{});
    case kFloat16:
    case kBFloat16:
      return fn(uint16_t{});
    case kFloat32:
      return fn(float{});
    case kFloat64:
      return fn(double{});
    case kComplex64:
    case kComplex128:
      STRIDE_ASSERT(false, "process groups refuse complex tensors before they reach Gloo");
  }
}

// Bools reduce as logic, as with MPI: sum and max are "any" (max of bytes
// 0/1), min is "all".
ReduceFn reduce_fn_for(const RawCollective& c) {
  ReduceFn fn = nullptr;
  const ReduceOp op = c.dtype == kBool && c.op == ReduceOp::Sum ? ReduceOp::Max : c.op;
  with_wire_type(c.dtype, [&](auto tag) { fn = reduce_fn<decltype(tag)>(op); });
  return fn;
}

// The tag of the barrier that ends a rendezvous; collectives count theirs
// from 0.
constexpr uint32_t kRendezvousTag = 0xffffffff;

// What every Gloo group of the process shares.
struct GlooWorld {
  std::shared_ptr<gloo::transport::Device> device;
  std::unique_ptr<TcpStore> store;
  std::chrono::milliseconds timeout;
  std::shared_ptr<std::atomic<bool>> broken = std::make_shared<std::atomic<bool>>(false);
  CommThread thread;
};

std::unique_ptr<GlooWorld>& gloo_world() {
  static std::unique_ptr<GlooWorld> w;
  return w;
}

void run_collective(const RawCollective& c,
                    const std::shared_ptr<gloo::Context>& context,
                    uint32_t tag) {
  const auto timeout = context->getTimeout();
  with_wire_type(c.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    switch (c.kind) {
      case RawCollective::Kind::AllReduce: {
        gloo::AllreduceOptions o(context);
        o.setOutput(static_cast<T*>(c.recv), size_t(c.count));
        o.setReduceFunction(reduce_fn_for(c));
        o.setTag(tag);
        o.setTimeout(timeout);
        gloo::allreduce(o);
        return;
      }
      case RawCollective::Kind::Broadcast: {
        gloo::BroadcastOptions o(context);
        o.setOutput(static_cast<T*>(c.recv), size_t(c.count));
        o.setRoot(c.root);
        o.setTag(tag);
        o.setTimeout(timeout);
        gloo::broadcast(o);
        return;
      }
      case RawCollective::Kind::AllGather: {
        gloo::AllgatherOptions o(context);
        o.setInput(const_cast<T*>(static_cast<const T*>(c.send)), size_t(c.count));
        o.setOutput(static_cast<T*>(c.recv), size_t(c.count) * size_t(context->size));
        o.setTag(tag);
        o.setTimeout(timeout);
        gloo::allgather(o);
        return;
      }
      case RawCollective::Kind::ReduceScatter: {
        // Gloo's functional API has no reduce-scatter: an all-reduce of the
        // whole input, of which this rank keeps its chunk (twice a ring
        // reduce-scatter's traffic; the results are the same).
        std::vector<T> whole(size_t(c.count) * size_t(context->size));
        std::memcpy(whole.data(), c.send, whole.size() * sizeof(T));
        gloo::AllreduceOptions o(context);
        o.setOutput(whole.data(), whole.size());
        o.setReduceFunction(reduce_fn_for(c));
        o.setTag(tag);
        o.setTimeout(timeout);
        gloo::allreduce(o);
        std::memcpy(c.recv, whole.data() + size_t(context->rank) * size_t(c.count),
                    size_t(c.count) * sizeof(T));
        return;
      }
      case RawCollective::Kind::Barrier: {
        gloo::BarrierOptions o(context);
        o.setTag(tag);
        o.setTimeout(timeout);
        gloo::barrier(o);
        return;
      }
    }
  });
}

// Connects `context`'s ranks to each other through `store`, then waits for
// all of them to be connected: none leaves the rendezvous (and rank 0 may
// stop serving it) while another still reads from it.
void connect(const std::shared_ptr<gloo::rendezvous::Context>& context,
             gloo::rendezvous::Store& store,
             std::shared_ptr<gloo::transport::Device>& device) {
  context->connectFullMesh(store, device);
  gloo::BarrierOptions o(context);
  o.setTag(kRendezvousTag);
  o.setTimeout(context->getTimeout());
  gloo::barrier(o);
}

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(std::shared_ptr<gloo::rendezvous::Context> context, std::string name)
      : context_(std::move(context)), name_(std::move(name)) {}

  void submit(const RawCollective& c, std::shared_ptr<WorkState> work) override {
    GlooWorld* w = gloo_world().get();
    if (!w) {
      work->complete(stride::detail::str_cat("[", c.op_name, "] distributed::destroy() has run; ",
                                             "this group can no longer communicate."));
      return;
    }
    if (*w->broken) {
      work->complete(stride::detail::str_cat("[", c.op_name,
                                             "] the process group is broken: an earlier ",
                                             "collective failed or timed out."));
      return;
    }
    // Gloo fails the collective itself after the timeout; wait() gives it a
    // little longer, so that Gloo's error (naming the peer) is the one seen.
    work->timeout = w->timeout + std::chrono::seconds(5);
    work->on_timeout = [broken = w->broken] { *broken = true; };
    w->thread.enqueue(
        [c, context = context_, tag = next_tag_++, broken = w->broken, work = std::move(work)] {
          profiler::RecordFunction record(c.op_name);
          try {
            run_collective(c, context, tag);
            work->complete();
          } catch (const std::exception& e) {
            *broken = true;
            work->complete(stride::detail::str_cat(
                "[", c.op_name, "] failed, or timed out after ",
                double(context->getTimeout().count()) / 1000.0,
                " s: a rank of its group has died or hangs. Hint: check the other ranks' output; ",
                "STRIDE_DIST_TIMEOUT sets the timeout in seconds. Gloo: ", e.what()));
          }
        });
  }

  std::unique_ptr<Communicator> split(const std::vector<int>& ranks) override {
    // Collective: every rank counts the split, so that the members of the
    // same split meet under the same store prefix.
    const std::string name = name_ + "/" + std::to_string(splits_++);
    const auto position = std::find(ranks.begin(), ranks.end(), context_->rank);
    if (position == ranks.end()) return nullptr;
    GlooWorld& w = *gloo_world();
    auto context = std::make_shared<gloo::rendezvous::Context>(int(position - ranks.begin()),
                                                               int(ranks.size()));
    context->setTimeout(w.timeout);
    gloo::rendezvous::PrefixStore store(name, *w.store);
    w.thread.run_sync([&] { connect(context, store, w.device); });
    return std::make_unique<GlooCommunicator>(std::move(context), name);
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }

 private:
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::string name_;  // the store prefix of this group's rendezvous
  std::atomic<uint32_t> next_tag_ = 0;
  int splits_ = 0;
};

}  // namespace

// A rank that dies closes its sockets, and Gloo's next write to one raises
// SIGPIPE, whose default action ends this process without a word before
// the collective can report the lost rank (stride's own sockets send with
// MSG_NOSIGNAL). Ignored, the write fails with EPIPE, which Gloo throws and
// the collective turns into its error. A handler the program installed is
// left alone.
void ignore_sigpipe() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  current.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &current, nullptr);
}

std::unique_ptr<Communicator> gloo_init_world(const EnvLaunch& launch,
                                              std::chrono::milliseconds timeout) {
  ignore_sigpipe();
  auto w = std::make_unique<GlooWorld>();
  w->timeout = timeout;
  w->store = std::make_unique<TcpStore>(launch.master_addr, launch.master_port,
                                        /*serve=*/launch.rank == 0, timeout);
  gloo::transport::tcp::attr attr;
  // Gloo listens on the address this rank reached rank 0 from: the
  // interface of the network the ranks share.
  attr.hostname = w->store->local_address();
  w->device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(launch.rank, launch.world_size);
  context->setTimeout(timeout);
  gloo::rendezvous::PrefixStore store("world", *w->store);
  try {
    w->thread.run_sync([&] { connect(context, store, w->device); });
  } catch (const std::exception& e) {
    STRIDE_CHECK(false, DistributedError, "[distributed::init] rank ", launch.rank, " of ",
                 launch.world_size, " could not connect to the others: ", e.what());
  }
  gloo_world() = std::move(w);
  return std::make_unique<GlooCommunicator>(std::move(context), "world");
}

void gloo_shutdown() {
  std::unique_ptr<GlooWorld>& w = gloo_world();
  // A broken world's thread may sit in a collective that waits for a lost
  // rank until Gloo's timeout: the process leaves it behind instead.
  if (w && *w->broken) {
    (void)w.release();
    return;
  }
  w = nullptr;
}

}  // namespace stride::distributed::detail
