// DistributedDataParallel (Notes [Gradient buckets] and [Deterministic
// gradient reduction] in include/stride/distributed/ddp.h).
#include "stride/distributed/ddp.h"

#include <exception>

#include "core/check.h"
#include "stride/autograd.h"
#include "stride/ops.h"
#include "stride/profiler.h"

namespace stride::distributed {

namespace {

struct Bucket {
  std::vector<size_t> params;    // indices into Impl::params
  std::vector<int64_t> offsets;  // of each parameter in the flat buffer
  int64_t numel = 0;
  ScalarType dtype = kFloat32;
  int pending = 0;  // parameters whose gradient is not ready yet this backward
  bool launched = false;
  Tensor flat;      // [numel], or [local shards, numel] with deterministic shards
  Tensor gathered;  // [shards, numel] with deterministic shards
  Work work;
};

// The parameters' names, dtypes and shapes: equal on every rank exactly when
// the models have the same structure.
std::string structure_of(const nn::OrderedDict<Tensor>& named) {
  std::string out;
  for (const auto& [name, t] : named) {
    out += name + ":" + std::string(to_string(t.dtype())) + shape_str(t.sizes()) + ";";
  }
  return out;
}

// The parameters' bytes, in order (contiguous copies of any other layout).
std::string values_of(const std::vector<Tensor>& params) {
  std::string out;
  for (const Tensor& p : params) {
    const Tensor c = p.contiguous();
    out.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
  }
  return out;
}

}  // namespace

struct DistributedDataParallel::Impl {
  DistributedDataParallel& ddp;
  std::vector<Tensor> params;
  std::vector<std::string> names;
  std::vector<size_t> bucket_of;  // per parameter
  std::vector<Bucket> buckets;
  std::vector<bool> ready;  // per parameter, this backward
  std::vector<HookHandle> hooks;
  bool sync = true;
  bool callback_queued = false;
  int shard_k = 0;  // deterministic shards: this rank's backward count in the step

  explicit Impl(DistributedDataParallel& owner) : ddp(owner) {}

  ProcessGroup& group() const { return *ddp.group_; }
  int shards() const { return ddp.options_.deterministic_shards; }
  bool last_local_shard() const { return shards() == 0 || shard_k == ddp.local_shards() - 1; }

  void build_buckets(double cap_mb) {
    const auto cap = int64_t(cap_mb * 1024 * 1024);
    bucket_of.assign(params.size(), 0);
    int64_t bytes = 0;
    for (size_t i = params.size(); i-- > 0;) {
      const Tensor& p = params[i];
      if (!p.requires_grad()) continue;  // frozen: no gradient to reduce
      const bool fresh = buckets.empty() || buckets.back().dtype != p.dtype() || bytes >= cap;
      if (fresh) {
        buckets.emplace_back();
        buckets.back().dtype = p.dtype();
        bytes = 0;
      }
      Bucket& b = buckets.back();
      b.params.push_back(i);
      b.offsets.push_back(b.numel);
      b.numel += p.numel();
      bytes += int64_t(p.nbytes());
      bucket_of[i] = buckets.size() - 1;
    }
    const int local = ddp.local_shards();
    for (Bucket& b : buckets) {
      const TensorOptions opts = TensorOptions(b.dtype);
      if (shards() > 0) {
        b.flat = empty({local, b.numel}, opts);
        b.gathered = empty({shards(), b.numel}, opts);
      } else {
        b.flat = empty({b.numel}, opts);
      }
    }
    reset_step_state();
  }

  void reset_step_state() {
    ready.assign(params.size(), false);
    for (Bucket& b : buckets) {
      b.pending = int(b.params.size());
      b.launched = false;
      b.work = Work();
    }
    callback_queued = false;
  }

  void install_hooks() {
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].requires_grad()) continue;
      hooks.push_back(params[i].register_post_accumulate_grad_hook(
          [this, i](Tensor&) { on_gradient_ready(i); }));
    }
  }

  void on_gradient_ready(size_t i) {
    if (!sync) return;
    if (!callback_queued) {
      callback_queued = true;
      autograd::queue_callback([this] { finish_backward(); });
    }
    if (ready[i]) return;
    ready[i] = true;
    Bucket& b = buckets[bucket_of[i]];
    if (--b.pending == 0) launch(b);
  }

  // This shard's slot of the flat buffer (the whole buffer without shards).
  Tensor slot(Bucket& b) const { return shards() > 0 ? b.flat.select(0, shard_k) : b.flat; }

  void copy_into_bucket(Bucket& b) {
    NoGradGuard no_grad;
    Tensor dst = slot(b);
    for (size_t j = 0; j < b.params.size(); ++j) {
      const Tensor& p = params[b.params[j]];
      Tensor part = dst.narrow(0, b.offsets[j], p.numel()).view(p.sizes());
      if (p.grad().defined()) {
        part.copy_(p.grad());
      } else {
        part.zero_();  // an unused parameter (find_unused_parameters)
      }
    }
  }

  void launch(Bucket& b) {
    b.launched = true;
    if (!last_local_shard()) return;  // copied at the end of this backward
    profiler::RecordFunction record("DistributedDataParallel.launch_bucket");
    copy_into_bucket(b);
    b.work = shards() > 0 ? group().all_gather(b.gathered, b.flat)
                          : group().all_reduce(b.flat, ReduceOp::Avg);
  }

  std::vector<std::string> unready_names() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].requires_grad() && !ready[i]) out.push_back(names[i]);
    }
    return out;
  }

  void finish_backward() {
    const std::vector<std::string> unused = unready_names();
    if (!unused.empty() && !ddp.options_.find_unused_parameters) {
      wait_launched();
      reset_step_state();
      std::string list;
      for (const auto& n : unused) list += (list.empty() ? "" : ", ") + n;
      throw DistributedError(stride::detail::str_cat(
          "[DistributedDataParallel] these parameters received no gradient in this backward: ",
          list,
          ". Every rank must produce a gradient for every parameter before the reduction. Hint: "
          "construct with DDPOptions::find_unused_parameters = true if they are unused on "
          "purpose, or freeze them (requires_grad_(false))."));
    }
    for (Bucket& b : buckets) {
      if (!b.launched) launch(b);
    }
    if (!last_local_shard()) {
      stash_shard();
      return;
    }
    wait_launched();
    write_back();
    shard_k = 0;
    reset_step_state();
  }

  // Deterministic shards before the last: keep this shard's gradients and
  // clear .grad so that the next shard's backward starts from nothing.
  void stash_shard() {
    for (Bucket& b : buckets) copy_into_bucket(b);
    for (Tensor& p : params) p.mutable_grad() = Tensor();
    ++shard_k;
    reset_step_state();
  }

  void wait_launched() {
    for (Bucket& b : buckets) b.work.wait();
  }

  // The reduced gradients into .grad: the all-reduce's average, or the
  // shards summed in shard order and divided by their count.
  void write_back() {
    NoGradGuard no_grad;
    for (Bucket& b : buckets) {
      Tensor reduced = b.flat;
      if (shards() > 0) {
        reduced = b.gathered.select(0, 0).clone();
        for (int s = 1; s < shards(); ++s) reduced.add_(b.gathered.select(0, s));
        reduced.div_(double(shards()));
      }
      for (size_t j = 0; j < b.params.size(); ++j) {
        Tensor& p = params[b.params[j]];
        Tensor part = reduced.narrow(0, b.offsets[j], p.numel()).view(p.sizes());
        Tensor& grad = p.mutable_grad();
        if (grad.defined()) {
          grad.copy_(part);
        } else {
          grad = part.clone();
        }
      }
    }
  }
};

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 DDPOptions options,
                                                 std::shared_ptr<ProcessGroup> group)
    : module_(std::move(module)), options_(options), group_(std::move(group)) {
  STRIDE_CHECK(module_ != nullptr, ValueError, "[DistributedDataParallel] module is null.");
  if (!group_) group_ = std::shared_ptr<ProcessGroup>(std::shared_ptr<ProcessGroup>(), &world());
  const int k = options_.deterministic_shards;
  STRIDE_CHECK(k >= 0 && (k == 0 || k % group_->size() == 0), ValueError,
               "[DistributedDataParallel] deterministic_shards (", k,
               ") must be 0 or a multiple of the group's size (", group_->size(), ").");
  STRIDE_CHECK(options_.bucket_cap_mb > 0, ValueError,
               "[DistributedDataParallel] bucket_cap_mb must be positive; got ",
               options_.bucket_cap_mb, ".");
  impl_ = std::make_unique<Impl>(*this);
  const nn::OrderedDict<Tensor> named = module_->named_parameters();
  check_identical("the model's parameter names, dtypes and shapes", structure_of(named),
                  group_.get());
  for (const auto& [name, t] : named) {
    impl_->names.push_back(name);
    impl_->params.push_back(t);
  }
  if (options_.check_initial_parameters) check_parameters_identical();
  if (options_.broadcast_on_construction) {
    NoGradGuard no_grad;
    for (Tensor& p : impl_->params) group_->broadcast(p, 0).wait();
    for (auto& [name, b] : module_->named_buffers()) group_->broadcast(b, 0).wait();
  }
  impl_->build_buckets(options_.bucket_cap_mb);
  impl_->install_hooks();
}

DistributedDataParallel::~DistributedDataParallel() {
  for (HookHandle& h : impl_->hooks) h.remove();
  // The buckets' collectives must end before their buffers go. One that
  // failed is the error a step reports, usually the one unwinding through
  // here now: thrown again from a destructor it would end the process
  // (std::terminate) before that error reached anyone.
  for (Bucket& b : impl_->buckets) {
    try {
      b.work.wait();
    } catch (const std::exception&) {
    }
  }
}

void DistributedDataParallel::check_parameters_identical() const {
  check_identical("the model's parameter values", values_of(impl_->params), group_.get());
}

int DistributedDataParallel::local_shards() const {
  return options_.deterministic_shards > 0 ? options_.deterministic_shards / group_->size() : 1;
}

int DistributedDataParallel::shard_index(int k) const {
  return group_->rank() * local_shards() + k;
}

DistributedDataParallel::NoSyncGuard::NoSyncGuard(DistributedDataParallel& ddp)
    : ddp_(ddp), previous_(ddp.impl_->sync) {
  STRIDE_CHECK(ddp.options_.deterministic_shards == 0, ValueError,
               "[DistributedDataParallel::no_sync] deterministic shards already accumulate "
               "locally; no_sync() is for the all-reduce mode.");
  ddp.impl_->sync = false;
}

DistributedDataParallel::NoSyncGuard::~NoSyncGuard() {
  ddp_.impl_->sync = previous_;
}

std::vector<std::vector<std::string>> DistributedDataParallel::bucket_names() const {
  std::vector<std::vector<std::string>> out;
  for (const Bucket& b : impl_->buckets) {
    std::vector<std::string> names;
    for (size_t i : b.params) names.push_back(impl_->names[i]);
    out.push_back(std::move(names));
  }
  return out;
}

std::pair<int64_t, int64_t> shard_rows(int64_t batch, int rank, int world, int shards, int k) {
  const int parts = shards > 0 ? shards : world;
  STRIDE_CHECK(world > 0 && parts % world == 0 && batch % parts == 0, ValueError, "[shard_rows] ",
               "a batch of ", batch, " cannot be cut into ", parts, " equal shards over ", world,
               " ranks.");
  const int index = shards > 0 ? rank * (shards / world) + k : rank;
  const int64_t rows = batch / parts;
  return {index * rows, (index + 1) * rows};
}

}  // namespace stride::distributed
