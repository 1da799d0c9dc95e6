// Sets stride's thread count for a scope and restores the previous one.
#pragma once

#include "stride/parallel.h"

namespace stride::testing {

class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(get_num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

}  // namespace stride::testing
