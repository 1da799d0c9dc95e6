// stride::cuda (include/stride/cuda.h) in a build without the CUDA backend.
#include "stride/cuda.h"

namespace stride::cuda {

bool is_available() {
  return false;
}
int device_count() {
  return 0;
}
// As core's error for a device without a backend says it, so that the two
// read alike.
std::string unavailable_reason() {
  return "this build of stride has no cuda backend";
}
void synchronize(int) {}
size_t memory_allocated(int) {
  return 0;
}
size_t max_memory_allocated(int) {
  return 0;
}
size_t memory_reserved(int) {
  return 0;
}
void reset_peak_memory_stats(int) {}
void empty_cache() {}

}  // namespace stride::cuda
