// Which listed ops (src/core/op_list.h) a test table covers: the check that
// ties the layout matrix, gradcheck and golden tables to the op list, so
// that an op cannot be added without its test rows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ops/apply.h"

namespace stride::testing {

// The listed op a test case named `name` is for: the one with the longest
// name that is `name` itself or is followed in it by an underscore
// ("sum_dim0" is sum's, "index_select_out" index_select's, "mul_" mul's);
// null when none.
inline const detail::OpInfo* op_of_case(const std::string& name) {
  const detail::OpInfo* best = nullptr;
  for (const detail::OpInfo& op : detail::kOps) {
    const std::string listed = op.name;
    const bool covers = name == listed ||
                        (name.size() > listed.size() &&
                         name.compare(0, listed.size(), listed) == 0 && name[listed.size()] == '_');
    if (covers && (best == nullptr || listed.size() > std::string(best->name).size())) best = &op;
  }
  return best;
}

// The names of the ops `wanted` selects that no case in `case_names` is for.
inline std::vector<std::string> ops_without_a_case(
    const std::vector<std::string>& case_names,
    const std::function<bool(const detail::OpInfo&)>& wanted) {
  std::vector<bool> covered(std::size(detail::kOps), false);
  for (const std::string& name : case_names) {
    if (const detail::OpInfo* op = op_of_case(name)) covered[size_t(op->op)] = true;
  }
  std::vector<std::string> missing;
  for (const detail::OpInfo& op : detail::kOps) {
    if (wanted(op) && !covered[size_t(op.op)]) missing.push_back(op.name);
  }
  return missing;
}

}  // namespace stride::testing
