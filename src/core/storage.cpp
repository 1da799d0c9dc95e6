#include "stride/storage.h"

#include <cstdlib>
#include <new>

#include "core/check.h"

namespace stride {
namespace {

void aligned_free(void* data, void*) {
  std::free(data);
}

void* allocate(size_t nbytes, Device device) {
  STRIDE_CHECK(device.is_cpu(), DeviceError, "[empty] cannot allocate on ", device.str(),
               ": stride has no CUDA backend yet. Hint: use the cpu device.");
  // aligned_alloc needs a size that is a multiple of the alignment.
  size_t rounded =
      (std::max<size_t>(nbytes, 1) + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  void* p = std::aligned_alloc(kCpuAlignment, rounded);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

StorageImpl::StorageImpl(size_t nbytes, Device device)
    : data_(allocate(nbytes, device)),
      nbytes_(nbytes),
      device_(device),
      deleter_(aligned_free),
      ctx_(nullptr) {}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), ctx_(ctx) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_, ctx_);
}

}  // namespace stride
