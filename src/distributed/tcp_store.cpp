// The rendezvous store (Note [The rendezvous store] in tcp_store.h).
#include "distributed/tcp_store.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>
#include <thread>

#include "core/check.h"
#include "distributed/store_protocol.h"
#include "stride/distributed.h"

namespace stride::distributed::detail {

namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

// The server: one thread polling the listening socket and its clients.
class TcpStoreServer {
 public:
  explicit TcpStoreServer(int port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    STRIDE_CHECK(listen_fd_ >= 0, DistributedError,
                 "[distributed::init] cannot open the rendezvous socket: ", errno_text(), ".");
    const int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // v4 too
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_addr = in6addr_any;
      addr.sin6_port = htons(uint16_t(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_ANY);
      addr.sin_port = htons(uint16_t(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    if (rc != 0 || ::listen(listen_fd_, 128) != 0) {
      const std::string why = errno_text();
      ::close(listen_fd_);
      STRIDE_CHECK(false, DistributedError, "[distributed::init] rank 0 cannot serve the ",
                   "rendezvous on port ", port, ": ", why,
                   ". Hint: MASTER_PORT must be a free port on rank 0's machine.");
    }
    STRIDE_CHECK(::pipe2(wake_, O_CLOEXEC) == 0, DistributedError,
                 "[distributed::init] cannot create a pipe: ", errno_text(), ".");
    thread_ = std::thread([this] { loop(); });
  }

  ~TcpStoreServer() {
    const char byte = 0;
    [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
    thread_.join();
    for (auto& [fd, client] : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

 private:
  struct Client {
    std::string in, out;
  };

  void loop() {
    for (;;) {
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (auto& [fd, client] : clients_) {
        fds.push_back({fd, short(POLLIN | (client.out.empty() ? 0 : POLLOUT)), 0});
      }
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) accept_client();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents) service(fds[i].fd, fds[i].revents);
      }
    }
  }

  void accept_client() {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) clients_[fd];
  }

  void drop(int fd) {
    ::close(fd);
    clients_.erase(fd);
    for (auto& [key, waiters] : waiting_) std::erase(waiters, fd);
  }

  void service(int fd, short revents) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    Client& c = it->second;
    if (revents & POLLOUT) {
      const ssize_t n = ::send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return drop(fd);
      if (n > 0) c.out.erase(0, size_t(n));
    }
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
      char chunk[1 << 14];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return drop(fd);
      if (n > 0) c.in.append(chunk, size_t(n));
      if (!handle_requests(fd, c)) drop(fd);
    }
  }

  // Handles every whole request in c.in; false when the client sent
  // something that is not one.
  bool handle_requests(int fd, Client& c) {
    for (;;) {
      StoreRequest request;
      size_t consumed = 0;
      switch (parse_store_request(c.in, request, consumed)) {
        case ParseStatus::Malformed:
          return false;
        case ParseStatus::Incomplete:
          return true;
        case ParseStatus::Complete:
          break;
      }
      c.in.erase(0, consumed);
      if (request.op == StoreRequest::Op::Set) {
        c.out.push_back('\1');
        set(request.key, request.value);
      } else if (auto found = values_.find(request.key); found != values_.end()) {
        c.out += encode_field(found->second);
      } else {
        waiting_[request.key].push_back(fd);
      }
    }
  }

  void set(const std::string& key, const std::string& value) {
    values_[key] = value;
    auto waiters = waiting_.extract(key);
    if (waiters.empty()) return;
    for (int fd : waiters.mapped()) {
      auto it = clients_.find(fd);
      if (it != clients_.end()) it->second.out += encode_field(value);
    }
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::map<int, Client> clients_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<int>> waiting_;
  std::thread thread_;
};

TcpStore::TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout)
    : address_(host + ":" + std::to_string(port)), timeout_(timeout) {
  if (serve) server_ = std::make_unique<TcpStoreServer>(port);
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string last_error = "no address";
  for (;;) {
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) {
      last_error = gai_strerror(rc);
    } else {
      for (addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          fd_ = fd;
        } else {
          last_error = errno_text();
          ::close(fd);
        }
      }
      ::freeaddrinfo(found);
    }
    if (fd_ >= 0) break;
    STRIDE_CHECK(Clock::now() < deadline, DistributedError,
                 "[distributed::init] cannot reach the rendezvous at ", address_, " (", last_error,
                 ") within ", timeout.count() / 1000.0,
                 " s. Hint: rank 0 serves it; check MASTER_ADDR and MASTER_PORT, and that rank 0 "
                 "started.");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStore::send_all(const std::string& bytes, const std::string& what) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    STRIDE_CHECK(n > 0, DistributedError, "[distributed] the rendezvous at ", address_,
                 " closed while ", what, ": ", errno_text(), ".");
    sent += size_t(n);
  }
}

std::string TcpStore::receive(size_t n,
                              const std::string& what,
                              std::chrono::milliseconds timeout) {
  std::string out(n, '\0');
  size_t got = 0;
  const auto deadline = Clock::now() + timeout;
  while (got < n) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd_, POLLIN, 0};
    const int ready = left > 0 ? ::poll(&p, 1, int(std::min<int64_t>(left, 1 << 30))) : 0;
    if (ready < 0 && errno == EINTR) continue;
    STRIDE_CHECK(ready > 0, DistributedError, "[distributed] timed out after ",
                 timeout.count() / 1000.0, " s ", what, " at the rendezvous ", address_,
                 ". Hint: every rank of the world must start (WORLD_SIZE ranks, each RANK once).");
    const ssize_t r = ::recv(fd_, out.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    STRIDE_CHECK(r > 0, DistributedError, "[distributed] the rendezvous at ", address_,
                 " closed while ", what, ".");
    got += size_t(r);
  }
  return out;
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  STRIDE_CHECK(key.size() <= kMaxStoreKey && data.size() <= kMaxStoreValue, DistributedError,
               "[distributed] rendezvous entry '", key, "' is too large.");
  const std::string what = "setting '" + key + "'";
  send_all(encode_set(key, std::string_view(data.data(), data.size())), what);
  receive(1, what, timeout_);
}

std::vector<char> TcpStore::get(const std::string& key) {
  STRIDE_CHECK(key.size() <= kMaxStoreKey, DistributedError, "[distributed] rendezvous key '", key,
               "' is too long.");
  const std::string what = "waiting for '" + key + "'";
  send_all(encode_get(key), what);
  const std::string length = receive(4, what, timeout_);
  const size_t n = decode_length(length.data());
  STRIDE_CHECK(n <= kMaxStoreValue, DistributedError, "[distributed] the rendezvous at ", address_,
               " answered a malformed value for '", key, "'.");
  const std::string value = receive(n, what, timeout_);
  return {value.begin(), value.end()};
}

std::string TcpStore::local_address() const {
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  char host[NI_MAXHOST] = {};
  STRIDE_CHECK(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length) == 0 &&
                   ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), length, host, sizeof host,
                                 nullptr, 0, NI_NUMERICHOST) == 0,
               DistributedError,
               "[distributed::init] cannot read this rank's address: ", errno_text(), ".");
  return host;
}

void TcpStore::wait(const std::vector<std::string>& keys) {
  wait(keys, timeout_);
}

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) {
  // A get answers once the key is set: waiting for a key is getting it.
  for (const std::string& key : keys) get(key);
}

}  // namespace stride::distributed::detail
