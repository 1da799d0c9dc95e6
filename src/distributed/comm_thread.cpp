#include "distributed/comm_thread.h"

#include <memory>
#include <string>

#include "distributed/communicator.h"

namespace stride::distributed::detail {

CommThread::CommThread() : thread_([this] { loop(); }) {}

CommThread::~CommThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void CommThread::enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void CommThread::run_sync(std::function<void()> fn) {
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

void CommThread::loop() {
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

}  // namespace stride::distributed::detail
