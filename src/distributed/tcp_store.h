// The rendezvous of the environment-variable launcher: a key-value store
// served by rank 0 at MASTER_ADDR:MASTER_PORT, through which Gloo's ranks
// exchange their addresses once (torch.distributed's TCPStore). It carries
// nothing else: the collectives go over Gloo's own TCP transport.
//
// Note [The rendezvous store]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The protocol is one request per message on a connection that each rank
// keeps open: 'S' key value (set; the server answers one byte), or 'G' key
// (get; the server answers the value once some rank has set the key). Keys
// and values are length-prefixed (4 bytes, little endian) and bounded
// (store_protocol.h, fuzzed by fuzz/store_protocol_fuzz.cpp): a peer that
// sends anything else is disconnected, never trusted with an allocation. Every blocking step of a
// client (connecting while rank 0 starts, waiting for a key) gives up after the store's timeout
// with a DistributedError naming the address and the key, so a rank that
// never comes cannot hang the others.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace stride::distributed::detail {

class TcpStoreServer;

class TcpStore final : public gloo::rendezvous::Store {
 public:
  // Serves the store on `port` (every interface) when `serve`, then connects
  // to it at host:port, retrying until `timeout` while the server starts.
  TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  // The numeric address this process reached the store from.
  std::string local_address() const;

 private:
  void send_all(const std::string& bytes, const std::string& what);
  std::string receive(size_t n, const std::string& what, std::chrono::milliseconds timeout);

  std::unique_ptr<TcpStoreServer> server_;
  std::string address_;  // host:port, for errors
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
};

}  // namespace stride::distributed::detail
