// ZeRO-1 (Note [Sharded optimizer state] in include/stride/distributed/zero.h).
#include "stride/distributed/zero.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <tuple>

#include "core/check.h"
#include "stride/autograd.h"
#include "stride/ops.h"

namespace stride::distributed {

namespace {

// "state.<i>.<name>" -> i, or -1 for another key.
int64_t param_index_of(const std::string& key) {
  if (key.rfind("state.", 0) != 0) return -1;
  const size_t dot = key.find('.', 6);
  if (dot == std::string::npos) return -1;
  return std::stoll(key.substr(6, dot - 6));
}

// Broadcasts `text` from `root`.
std::string broadcast_string(ProcessGroup& group, const std::string& text, int root) {
  Tensor length = full({1}, int64_t(text.size()), TensorOptions(kInt64));
  group.broadcast(length, root).wait();
  Tensor bytes = empty({length.item<int64_t>()}, TensorOptions(kUInt8));
  if (group.rank() == root) std::memcpy(bytes.data_ptr(), text.data(), text.size());
  group.broadcast(bytes, root).wait();
  return std::string(static_cast<const char*>(bytes.data_ptr()), size_t(bytes.numel()));
}

}  // namespace

ShardedOptimizer::ShardedOptimizer(optim::Optimizer& optimizer, std::shared_ptr<ProcessGroup> group)
    : optimizer_(optimizer), group_(std::move(group)), params_(optimizer.parameters()) {
  if (!group_) group_ = std::shared_ptr<ProcessGroup>(std::shared_ptr<ProcessGroup>(), &world());
  // Largest first onto the least loaded rank; ties by index, so every rank
  // computes the same assignment.
  std::vector<size_t> order(params_.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return params_[a].numel() > params_[b].numel(); });
  std::vector<int64_t> load(size_t(group_->size()), 0);
  owner_.assign(params_.size(), 0);
  for (size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner_[i] = int(least);
    load[size_t(least)] += params_[i].numel();
  }
}

void ShardedOptimizer::step() {
  ProcessGroup& g = *group_;
  // Hide the other ranks' gradients: the optimizer skips parameters without
  // one, and never creates their state. They come back however step() ends.
  struct HiddenGrads {
    std::vector<Tensor>& params;
    std::vector<Tensor> grads;
    ~HiddenGrads() {
      for (size_t i = 0; i < params.size(); ++i) {
        if (grads[i].defined()) std::swap(grads[i], params[i].mutable_grad());
      }
    }
  } hidden{params_, std::vector<Tensor>(params_.size())};
  for (size_t i = 0; i < params_.size(); ++i) {
    if (owner_[i] != g.rank()) std::swap(hidden.grads[i], params_[i].mutable_grad());
  }
  optimizer_.step();
  // Every owner's parameters, packed per dtype, from the owner to all.
  NoGradGuard no_grad;
  std::map<std::pair<int, ScalarType>, std::vector<size_t>> packs;
  for (size_t i = 0; i < params_.size(); ++i) packs[{owner_[i], params_[i].dtype()}].push_back(i);
  std::vector<std::pair<Tensor, Work>> flights;
  for (const auto& [key, indices] : packs) {
    int64_t total = 0;
    for (size_t i : indices) total += params_[i].numel();
    Tensor flat = empty({total}, TensorOptions(key.second));
    if (key.first == g.rank()) {
      int64_t offset = 0;
      for (size_t i : indices) {
        flat.narrow(0, offset, params_[i].numel()).view(params_[i].sizes()).copy_(params_[i]);
        offset += params_[i].numel();
      }
    }
    Work work = g.broadcast(flat, key.first);
    flights.emplace_back(flat, std::move(work));
  }
  size_t k = 0;
  for (const auto& [key, indices] : packs) {
    auto& [flat, work] = flights[k++];
    work.wait();
    if (key.first == g.rank()) continue;
    int64_t offset = 0;
    for (size_t i : indices) {
      params_[i].copy_(flat.narrow(0, offset, params_[i].numel()).view(params_[i].sizes()));
      offset += params_[i].numel();
    }
  }
}

int64_t ShardedOptimizer::state_bytes() const {
  int64_t bytes = 0;
  for (const Tensor& p : params_) {
    if (const optim::ParamState* s = optimizer_.state(p)) {
      for (const auto& [name, t] : s->tensors) bytes += int64_t(t.nbytes());
    }
  }
  return bytes;
}

optim::OptimizerState ShardedOptimizer::state_dict() const {
  ProcessGroup& g = *group_;
  const optim::OptimizerState local = optimizer_.state_dict();
  optim::OptimizerState full;
  full.optimizer = local.optimizer;
  for (const auto& [key, value] : local.scalars) {
    if (param_index_of(key) < 0) full.scalars[key] = value;  // group options: equal everywhere
  }
  std::vector<std::tuple<int64_t, std::string, Tensor>> tensors;
  for (int root = 0; root < g.size(); ++root) {
    // The root's entries: scalars by value, tensors by name and shape.
    nlohmann::json entries = {{"scalars", nlohmann::json::object()},
                              {"tensors", nlohmann::json::array()}};
    if (g.rank() == root) {
      for (const auto& [key, value] : local.scalars) {
        if (param_index_of(key) >= 0) entries["scalars"][key] = value;
      }
      for (const auto& [key, t] : local.tensors) {
        entries["tensors"].push_back(
            {key, std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), int(t.dtype())});
      }
    }
    entries = nlohmann::json::parse(broadcast_string(g, entries.dump(), root));
    for (const auto& item : entries["scalars"].items()) {
      full.scalars[item.key()] = item.value().get<double>();
    }
    for (const auto& entry : entries["tensors"]) {
      const std::string key = entry[0];
      const auto shape = entry[1].get<std::vector<int64_t>>();
      Tensor t = empty(shape, TensorOptions(ScalarType(entry[2].get<int>())));
      if (g.rank() == root) {
        const auto it = std::find_if(local.tensors.begin(), local.tensors.end(),
                                     [&](const auto& kv) { return kv.first == key; });
        t.copy_(it->second);
      }
      g.broadcast(t, root).wait();
      tensors.emplace_back(param_index_of(key), key, t);
    }
  }
  // The unsharded optimizer's order: by parameter, then by name.
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (auto& [index, key, t] : tensors) full.tensors.emplace_back(key, t);
  return full;
}

void ShardedOptimizer::load_state_dict(const optim::OptimizerState& full) {
  const int me = group_->rank();
  auto mine = [&](const std::string& key) {
    const int64_t i = param_index_of(key);
    return i < 0 || (size_t(i) < owner_.size() && owner_[size_t(i)] == me);
  };
  optim::OptimizerState shard;
  shard.optimizer = full.optimizer;
  for (const auto& [key, value] : full.scalars) {
    if (mine(key)) shard.scalars[key] = value;
  }
  for (const auto& [key, t] : full.tensors) {
    if (mine(key)) shard.tensors.emplace_back(key, t);
  }
  optimizer_.load_state_dict(shard);
}

}  // namespace stride::distributed
