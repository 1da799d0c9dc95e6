#include "stride/storage.h"

#include <cstdint>

#include "core/check.h"
#include "stride/allocator.h"

namespace stride {
namespace {

// The block's capacity travels in the deleter's context pointer.
void free_block(void* data, void* capacity) {
  detail::cpu_free(data, reinterpret_cast<uintptr_t>(capacity));
}

}  // namespace

StorageImpl::StorageImpl(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device), deleter_(free_block) {
  STRIDE_CHECK(device.is_cpu(), DeviceError, "[empty] cannot allocate on ", device.str(),
               ": stride has no CUDA backend yet. Hint: use the cpu device.");
  size_t capacity = 0;
  data_ = detail::cpu_allocate(nbytes, &capacity);
  ctx_ = reinterpret_cast<void*>(uintptr_t(capacity));
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), ctx_(ctx) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_, ctx_);
}

}  // namespace stride
