// The rendezvous store of the environment-variable launcher (Note [The
// rendezvous store] in src/distributed/tcp_store.h): values reach every
// client, a get waits for a later set, every wait ends with an error naming
// what it waited for, and a peer that sends anything else is dropped without
// disturbing the others.
#ifdef STRIDE_HAS_GLOO

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "distributed/tcp_store.h"
#include "stride/distributed.h"

namespace stride::distributed::detail {
namespace {

using std::chrono::milliseconds;

// 127.0.0.1:port.
sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(uint16_t(port));
  return addr;
}

// A port nothing listens on now (the kernel's pick, released).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = loopback(0);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::vector<char> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

// A raw connection to the store at port, as a misbehaving peer makes one.
int connect_raw(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in addr = loopback(port);
  EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Sends raw bytes to the store at port; the server must close the
// connection instead of answering.
void send_raw(int port, const std::string& data) {
  const int fd = connect_raw(port);
  ASSERT_EQ(::send(fd, data.data(), data.size(), MSG_NOSIGNAL), ssize_t(data.size()));
  char byte;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0);
  ::close(fd);
}

TEST(TcpStore, ValuesReachEveryClientAndAGetWaitsForTheSet) {
  const int port = free_port();
  TcpStore server("127.0.0.1", port, /*serve=*/true, milliseconds(5000));
  TcpStore client("127.0.0.1", port, /*serve=*/false, milliseconds(5000));
  server.set("a", bytes("alpha"));
  EXPECT_EQ(client.get("a"), bytes("alpha"));
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(100));
    server.set("b", std::vector<char>(100000, 'x'));  // more than one packet
  });
  EXPECT_EQ(client.get("b"), std::vector<char>(100000, 'x'));
  later.join();
  client.wait({"a", "b"});
  server.set("empty", {});
  EXPECT_TRUE(client.get("empty").empty());
  EXPECT_EQ(client.local_address(), "127.0.0.1");
}

TEST(TcpStore, AMissingKeyTimesOutNamingIt) {
  const int port = free_port();
  TcpStore store("127.0.0.1", port, /*serve=*/true, milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  try {
    store.get("never");
    FAIL() << "no timeout";
  } catch (const DistributedError& e) {
    EXPECT_NE(std::string(e.what()).find("'never'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(TcpStore, NoServerIsAnErrorNamingTheAddress) {
  const int port = free_port();
  try {
    TcpStore store("127.0.0.1", port, /*serve=*/false, milliseconds(200));
    FAIL() << "connected to nothing";
  } catch (const DistributedError& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << e.what();
  }
}

TEST(TcpStore, MalformedRequestsAreDroppedAndTheStoreServesOn) {
  const int port = free_port();
  TcpStore store("127.0.0.1", port, /*serve=*/true, milliseconds(5000));
  send_raw(port, "X");                                  // no such request
  send_raw(port, std::string("G\xff\xff\xff\xff", 5));  // a key of 4 GiB
  std::string huge_value("S\x01\x00\x00\x00k\xff\xff\xff\x7f", 10);
  send_raw(port, huge_value);  // a value over kMaxValue
  store.set("after", bytes("ok"));
  TcpStore client("127.0.0.1", port, /*serve=*/false, milliseconds(5000));
  EXPECT_EQ(client.get("after"), bytes("ok"));
}

TEST(TcpStore, ATruncatedRequestDoesNotBlockOthers) {
  const int port = free_port();
  TcpStore store("127.0.0.1", port, /*serve=*/true, milliseconds(5000));
  // Half a request, then silence: the server must go on serving.
  const int fd = connect_raw(port);
  ASSERT_EQ(::send(fd, "S\x05\x00", 3, MSG_NOSIGNAL), 3);
  store.set("k", bytes("v"));
  EXPECT_EQ(store.get("k"), bytes("v"));
  ::close(fd);
}

}  // namespace
}  // namespace stride::distributed::detail

#endif  // STRIDE_HAS_GLOO
