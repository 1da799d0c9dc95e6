// libFuzzer target: the rendezvous store's request parser
// (src/distributed/store_protocol.h) on a stream of arbitrary bytes, as the
// store's server meets whatever connects to MASTER_PORT. Every request it
// accepts is within the limits, consumes bytes, and encodes back to the
// bytes it was parsed from; a prefix of a request asks for more bytes, never
// more than the limits allow. A crash, a hang or a broken property is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "distributed/store_protocol.h"

namespace sd = stride::distributed::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (;;) {
    sd::StoreRequest request;
    size_t consumed = 0;
    const sd::ParseStatus status = sd::parse_store_request(rest, request, consumed);
    if (status != sd::ParseStatus::Complete) return 0;
    if (consumed == 0 || consumed > rest.size() || request.key.size() > sd::kMaxStoreKey ||
        request.value.size() > sd::kMaxStoreValue) {
      std::abort();
    }
    const std::string again = request.op == sd::StoreRequest::Op::Set
                                  ? sd::encode_set(request.key, request.value)
                                  : sd::encode_get(request.key);
    if (again != rest.substr(0, consumed)) std::abort();
    rest.remove_prefix(consumed);
  }
}
