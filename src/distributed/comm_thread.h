// The thread a transport runs its collectives on (Note [The communication
// thread] in mpi.cpp): tasks in submission order, each to completion.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace stride::distributed::detail {

class CommThread {
 public:
  CommThread();
  // Runs the tasks already queued, then joins the thread.
  ~CommThread();
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;

  void enqueue(std::function<void()> task);
  // Runs `fn` on the thread and waits for it; rethrows its exception as a
  // DistributedError.
  void run_sync(std::function<void()> fn);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the queue exists
};

}  // namespace stride::distributed::detail
