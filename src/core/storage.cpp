#include "stride/storage.h"

#include "stride/backend.h"

namespace stride {

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  const DataPtr memory = device_backend(device).allocate(nbytes, device);
  data_ = memory.data;
  ctx_ = memory.ctx;
  deleter_ = memory.deleter;
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), ctx_(ctx) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_, ctx_);
}

}  // namespace stride
