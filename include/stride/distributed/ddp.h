// DistributedDataParallel: a module trained by every rank of a group on its
// share of the batch, with gradients averaged across ranks as backward
// produces them (torch.nn.parallel.DistributedDataParallel).
//
// Note [Gradient buckets]
// ~~~~~~~~~~~~~~~~~~~~~~~
// The parameters are grouped into buckets of about bucket_cap_mb, in reverse
// registration order (the order backward tends to produce their gradients)
// and by dtype. A post-accumulate-grad hook on each parameter counts it as
// ready; when a bucket's last parameter is ready its gradients are copied
// into the bucket's flat buffer and its all-reduce starts at once, on the
// communication thread, while backward goes on with earlier layers. At the
// end of backward (an engine callback) the remaining buckets are checked:
// a parameter that got no gradient is an error naming it, unless
// find_unused_parameters, when it counts as a zero gradient. Then every
// bucket is waited for and its averaged gradients copied back to .grad.
//
// Note [Deterministic gradient reduction]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Averaging with all_reduce sums the ranks' gradients in whatever order MPI
// chooses, and a rank's gradient is that of its whole share of the batch, so
// results differ from one world size to another by float32 rounding. With
// `deterministic_shards` = K the global batch is cut into K shards (K a
// multiple of every world size used) and each rank runs one backward per
// shard it owns (K / world_size of them, in shard order: the k-th backward of
// rank r is shard r * K / world_size + k). Each shard's gradient is kept
// apart; the ranks all-gather them and every rank sums all K in shard order
// and divides by K. The arithmetic is then the same on 1, 2 or K processes,
// so the weights are bit for bit the same, at the cost of moving K
// gradients instead of reducing one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "stride/distributed.h"
#include "stride/nn/module.h"

namespace stride::distributed {

struct DDPOptions {
  double bucket_cap_mb = 25;
  // Parameters that get no gradient in a step count as zero instead of
  // being an error.
  bool find_unused_parameters = false;
  // 0: average with all_reduce. K > 0: Note [Deterministic gradient
  // reduction]; K must be a multiple of the group's size.
  int deterministic_shards = 0;
  // Broadcast parameters and buffers from rank 0 at construction, after
  // checking that every rank has the same parameter names and shapes.
  bool broadcast_on_construction = true;
  // Also check that every rank starts from the same parameter values (a
  // checksum), as ranks that build the model from one seed, config and
  // checkpoint do: a difference means they did not.
  bool check_initial_parameters = false;
};

class DistributedDataParallel {
 public:
  // Wraps `module` on `group` (the world when null).
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                   DDPOptions options = {},
                                   std::shared_ptr<ProcessGroup> group = nullptr);
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  nn::Module& module() const { return *module_; }
  ProcessGroup& group() const { return *group_; }
  const DDPOptions& options() const { return options_; }

  // Backward passes per step on this rank: K / world size with
  // deterministic shards, else 1 (more with no_sync()).
  int local_shards() const;
  // The global shard index of this rank's `k`-th backward of a step.
  int shard_index(int k) const;

  // While the guard lives, backward only accumulates into .grad locally
  // (gradient accumulation); the first backward after it reduces all of it.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel& ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  // Throws DistributedError naming the ranks whose parameter values differ
  // from rank 0's (a checksum of every byte), e.g. after each rank loaded a
  // checkpoint. Collective.
  void check_parameters_identical() const;

  // The buckets' parameter names, in the order their reductions start.
  std::vector<std::vector<std::string>> bucket_names() const;

  struct Impl;

 private:
  std::shared_ptr<nn::Module> module_;
  DDPOptions options_;
  std::shared_ptr<ProcessGroup> group_;
  std::unique_ptr<Impl> impl_;
};

// The global batch's rows owned by `rank`'s `k`-th backward with `shards`
// equal shards (Note [Deterministic gradient reduction]), or by `rank` alone
// when shards is 0: [begin, end) of `batch` rows.
std::pair<int64_t, int64_t> shard_rows(int64_t batch, int rank, int world, int shards, int k);

}  // namespace stride::distributed
