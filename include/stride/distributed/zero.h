// ZeRO stage 1 (Rajbhandari et al., "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models"): the optimizer state sharded across
// the ranks of a data-parallel group.
//
// Note [Sharded optimizer state]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each parameter has one owner rank (whole parameters, assigned largest
// first to the least loaded rank, as torch's ZeroRedundancyOptimizer does),
// and only the owner keeps its optimizer state. step() hides the other
// ranks' gradients from the wrapped optimizer, which then updates (and
// creates state for) this rank's parameters alone; then every owner
// broadcasts its updated parameters, packed per owner and dtype. The
// updates are elementwise, so the weights are bit for bit those of the
// unsharded optimizer. Checkpoints stay independent of the world size:
// state_dict() gathers every shard into the full state, and
// load_state_dict() keeps this rank's part of a full state.
#pragma once

#include <memory>
#include <vector>

#include "stride/distributed.h"
#include "stride/optim/optimizer.h"

namespace stride::distributed {

class ShardedOptimizer {
 public:
  // Shards the state of `optimizer` (whose parameters must be the same, in
  // the same order, on every rank) over `group` (the world when null).
  explicit ShardedOptimizer(optim::Optimizer& optimizer,
                            std::shared_ptr<ProcessGroup> group = nullptr);

  // The wrapped optimizer's step on this rank's parameters, then every
  // parameter broadcast from its owner. Collective.
  void step();
  // The rank that owns parameter `index` (in optimizer.parameters() order).
  int owner(size_t index) const { return owner_[index]; }
  // Bytes of optimizer state this rank holds.
  int64_t state_bytes() const;

  // The full state, as the unsharded optimizer's state_dict() would return
  // it (tensors are copies). Collective.
  optim::OptimizerState state_dict() const;
  // Loads this rank's part of a full state (from state_dict() at any world
  // size, or from an unsharded optimizer).
  void load_state_dict(const optim::OptimizerState& full);

 private:
  optim::Optimizer& optimizer_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Tensor> params_;
  std::vector<int> owner_;
};

}  // namespace stride::distributed
