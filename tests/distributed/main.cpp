// The distributed suite's main: every rank runs every test (a collective
// needs all of them). Rank 0 prints GoogleTest's report; the others print
// only their failures, prefixed with their rank. mpirun fails the run when
// any rank fails.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "stride/distributed.h"

namespace {

class FailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  // Remembered here: GoogleTest holds its own lock while reporting a result.
  void OnTestStart(const testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s: %s:%d\n%s\n", rank_, test_.c_str(),
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

 private:
  int rank_;
  std::string test_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  stride::distributed::init();
  const int rank = stride::distributed::rank();
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  const int failed = RUN_ALL_TESTS();
  stride::distributed::destroy();
  return failed;
}
