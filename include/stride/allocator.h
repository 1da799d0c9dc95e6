// The CPU allocator behind every CPU Storage (through the CPU backend,
// backend.h), and the byte count of meta storages.
//
// Note [Caching allocator]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A training step allocates and frees the same large buffers every step
// (activations, gradients, optimizer temporaries). Handed to malloc, buffers of
// more than a few hundred KiB come from mmap or from the top of the heap, and
// glibc returns them to the OS when they are freed; the next step then pays a
// page fault (a trap plus zeroing 4 KiB) for every page it touches again, a
// large share of a small model's step. So blocks
// of at least kMinCachedBytes are rounded up to a size class (8 per power of
// two, at most 12.5% more address space; untouched pages cost no memory) and,
// when freed, kept on that class's free list for the next request of the same
// class, as PyTorch's CUDA caching allocator does. A step that repeats the
// previous one's allocations is then served entirely from the cache.
//
// The cache never holds more than the peak of live cached-class bytes seen so
// far (so memory stays within 2x of the program's own peak, and in steady
// training well below): a block freed beyond that goes back to the OS.
// empty_cpu_cache() releases everything cached. Smaller blocks go straight to
// malloc, whose bins already reuse them without faults. Under AddressSanitizer
// cached blocks are poisoned, so a use after free still reports.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stride {

struct CpuAllocatorStats {
  size_t allocated_bytes = 0;       // in live blocks of cached size classes
  size_t peak_allocated_bytes = 0;  // the most allocated_bytes has been
  size_t cached_bytes = 0;          // in freed blocks kept for reuse
  int64_t hits = 0;                 // requests served from the cache
  int64_t misses = 0;               // requests that went to the OS
};

// Buffers at least this large are cached (Note [Caching allocator]).
inline constexpr size_t kMinCachedBytes = size_t(64) << 10;

CpuAllocatorStats cpu_allocator_stats();
// Returns every cached block to the OS (live blocks are untouched).
void empty_cpu_cache();

// The bytes this process can still allocate, as far as the system tells:
// the least of the kernel's MemAvailable estimate, the room left under a
// cgroup v2 memory limit and under an address-space rlimit, plus what the
// cache holds; SIZE_MAX when none is known. Loaders check a file's claims
// against it before they allocate, so that an oversized (or hostile) file
// is an error that says so rather than an out-of-memory abort.
size_t available_cpu_memory();

// The bytes held by meta storages (Note [Meta memory] in src/core/backend.cpp):
// what the same program would hold on a device with memory, without a
// caching allocator's rounding.
struct MetaMemoryStats {
  size_t allocated_bytes = 0;
  size_t peak_allocated_bytes = 0;
};
MetaMemoryStats meta_memory_stats();
// Starts a new peak from the bytes held now.
void reset_meta_peak_memory();

namespace detail {
// 64-byte aligned, uninitialised; `capacity` receives the block's size, which
// cpu_free needs back.
void* cpu_allocate(size_t nbytes, size_t* capacity);
void cpu_free(void* data, size_t capacity) noexcept;
}  // namespace detail

}  // namespace stride
