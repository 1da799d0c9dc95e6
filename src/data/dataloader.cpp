// The non-template parts of the data loader: worker info, the seed
// derivations of Note [Loader randomness], error wrapping, option checks,
// TensorDataset and collate helpers.
#include "stride/data/dataloader.h"

#include <cstring>
#include <string>

#include "core/check.h"
#include "stride/ops.h"

namespace stride::data {

using stride::detail::str_cat;

namespace {

thread_local const WorkerInfo* current_worker_info = nullptr;

// Fork stream ids that keep the loader's derived generators apart (ASCII tags).
constexpr uint64_t kSamplerStream = 0x73616d706c6572ull;  // "sampler"
constexpr uint64_t kSampleStream = 0x73616d706c65ull;     // "sample"
constexpr uint64_t kSeedStream = 0x7365656473ull;         // "seeds"

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace

const WorkerInfo* get_worker_info() {
  return current_worker_info;
}

Generator& worker_generator() {
  const WorkerInfo* info = current_worker_info;
  STRIDE_CHECK(info != nullptr && info->generator != nullptr, ValueError,
               "[worker_generator] called outside a DataLoader worker. Hint: use it inside a "
               "dataset's get() or stream() while a DataLoader runs it, or use the `gen` "
               "argument of get().");
  return *info->generator;
}

namespace detail {

WorkerInfoScope::WorkerInfoScope(const WorkerInfo* info) : previous_(current_worker_info) {
  current_worker_info = info;
}

WorkerInfoScope::~WorkerInfoScope() {
  current_worker_info = previous_;
}

}  // namespace detail

WorkerError::WorkerError(const std::string& message,
                         int64_t worker_id,
                         int64_t sample_index,
                         int64_t batch_index,
                         std::exception_ptr original)
    : Error(message),
      worker_id_(worker_id),
      sample_index_(sample_index),
      batch_index_(batch_index),
      original_(std::move(original)) {}

Generator sampler_generator(uint64_t seed, int64_t epoch) {
  return Generator(seed).fork(kSamplerStream).fork(uint64_t(epoch));
}

Generator sample_generator(uint64_t seed, int64_t epoch, int64_t index) {
  return Generator(detail::sample_root_seed(seed, epoch)).fork(uint64_t(index));
}

uint64_t worker_base_seed(uint64_t seed, int64_t epoch) {
  Generator stream = Generator(seed).fork(kSeedStream);
  stream.set_state({stream.seed(), uint64_t(epoch)});
  return stream.next_u64();
}

Generator make_worker_generator(uint64_t base_seed, int64_t worker_id) {
  return Generator(base_seed).fork(uint64_t(worker_id));
}

namespace detail {

uint64_t sample_root_seed(uint64_t seed, int64_t epoch) {
  return Generator(seed).fork(kSampleStream).fork(uint64_t(epoch)).seed();
}

std::exception_ptr make_worker_error(int64_t worker_id,
                                     bool in_consumer_thread,
                                     int64_t epoch,
                                     FailedStep step,
                                     int64_t sample_index,
                                     int64_t batch_index,
                                     std::exception_ptr original) {
  std::string who = str_cat("worker ", worker_id);
  if (in_consumer_thread) who += " (the consumer thread: num_workers = 0)";
  std::string where;
  switch (step) {
    case FailedStep::Get:
      where =
          str_cat("loading sample ", sample_index, " (batch ", batch_index, ", epoch ", epoch, ")");
      break;
    case FailedStep::Collate:
      where = batch_index >= 0 ? str_cat("collating batch ", batch_index, " (epoch ", epoch, ")")
                               : str_cat("collating a batch of its stream (epoch ", epoch, ")");
      break;
    case FailedStep::StartStream:
      where = str_cat("starting its stream (epoch ", epoch, ")");
      break;
    case FailedStep::NextExample:
      where = str_cat("reading example ", sample_index, " of its stream (epoch ", epoch, ")");
      break;
    case FailedStep::Other:
      where = batch_index >= 0 ? str_cat("building batch ", batch_index, " (epoch ", epoch, ")")
                               : str_cat("reading its stream (epoch ", epoch, ")");
      break;
  }
  const std::string message =
      str_cat("[DataLoader] ", who, " failed while ", where, ": ", what_of(original));
  return std::make_exception_ptr(
      WorkerError(message, worker_id, sample_index, batch_index, std::move(original)));
}

void check_options(const DataLoaderOptions& options, bool iterable, int64_t dataset_size) {
  STRIDE_CHECK(options.batch_size >= 1, ValueError,
               "[DataLoader] batch_size must be at least 1; got ", options.batch_size, ".");
  STRIDE_CHECK(options.num_workers >= 0, ValueError,
               "[DataLoader] num_workers must be non-negative; got ", options.num_workers, ".");
  STRIDE_CHECK(options.prefetch_factor >= 1, ValueError,
               "[DataLoader] prefetch_factor must be at least 1; got ", options.prefetch_factor,
               ".");
  if (iterable) {
    STRIDE_CHECK(!options.shuffle, ValueError,
                 "[DataLoader] shuffle needs a map-style dataset; got an iterable one. Hint: "
                 "shuffle inside the dataset's stream with info.generator.");
    STRIDE_CHECK(!options.sampler, ValueError,
                 "[DataLoader] a sampler needs a map-style dataset; got an iterable one.");
    return;
  }
  STRIDE_CHECK(dataset_size >= 0, ValueError, "[DataLoader] the dataset's size() is negative (",
               dataset_size, ").");
  STRIDE_CHECK(!(options.shuffle && options.sampler), ValueError,
               "[DataLoader] shuffle and sampler are mutually exclusive. Hint: pass a "
               "RandomSampler as the sampler, or drop it and keep shuffle = true.");
}

void check_batch_indices(const std::vector<std::vector<int64_t>>& batches, int64_t dataset_size) {
  for (size_t b = 0; b < batches.size(); ++b) {
    for (int64_t i : batches[b]) {
      STRIDE_CHECK(i >= 0 && i < dataset_size, IndexError,
                   "[DataLoader] the sampler yielded index ", i, " (batch ", b,
                   ") but the dataset has ", dataset_size, " samples.");
    }
  }
}

void throw_stopped_epoch(const char* reason) {
  throw ValueError(str_cat("[DataLoader] this epoch was stopped because ", reason,
                           "; its iterator cannot advance. Hint: call begin() (or next()) again "
                           "for a new epoch."));
}

void throw_no_collate() {
  throw ValueError(
      "[DataLoader] no collate function: the example type has no Collate specialization "
      "convertible to the batch type. Hint: specialize stride::data::Collate or pass a collate "
      "function.");
}

void throw_null_dataset() {
  throw ValueError("[DataLoader] the dataset is null.");
}

void throw_past_end() {
  throw ValueError("[DataLoader] the iterator is past the end of its epoch.");
}

uint64_t default_loader_seed() {
  return default_generator().next_u64();
}

// ---- collate helpers ----

void throw_empty_collate() {
  throw ValueError("[collate] got no examples; a batch needs at least one.");
}

void throw_collate_size_mismatch(const char* what, size_t item, size_t got, size_t expected) {
  throw ShapeError(str_cat("[collate] example ", item, " is a ", what, " of ", got,
                           " elements but example 0 has ", expected,
                           "; examples of a batch must match."));
}

void throw_collate_key_mismatch(size_t item, const std::string& key) {
  throw ValueError(str_cat("[collate] example ", item, " has no key \"", key,
                           "\" but example 0 does; examples of a batch must have the same keys."));
}

Tensor stack_examples(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) throw_empty_collate();
  for (size_t i = 0; i < tensors.size(); ++i) {
    STRIDE_CHECK(tensors[i].defined(), ValueError, "[collate] example ", i,
                 " is an undefined tensor.");
    STRIDE_CHECK(tensors[i].sizes() == tensors[0].sizes(), ShapeError, "[collate] example ", i,
                 " has shape ", shape_str(tensors[i].sizes()), " but example 0 has ",
                 shape_str(tensors[0].sizes()),
                 "; stacking needs equal shapes. Hint: pad the examples or pass a collate "
                 "function.");
    STRIDE_CHECK(tensors[i].dtype() == tensors[0].dtype(), DTypeError, "[collate] example ", i,
                 " has dtype ", to_string(tensors[i].dtype()), " but example 0 has ",
                 to_string(tensors[0].dtype()), ".");
  }
  // Fast path: one allocation and a memcpy per contiguous example (stack
  // would unsqueeze every example and run cat's general copy). Examples that
  // require grad go through stack, which records the graph.
  const Tensor& first = tensors[0];
  bool plain = first.device().is_cpu();
  for (const Tensor& t : tensors) plain = plain && !t.requires_grad();
  if (!plain) return stack(tensors, 0);
  std::vector<int64_t> shape = {int64_t(tensors.size())};
  for (int64_t s : first.sizes()) shape.push_back(s);
  Tensor out = empty(shape, first.options());
  const size_t bytes = first.nbytes();
  auto* dst = static_cast<char*>(out.data_ptr());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].is_contiguous()) {
      if (bytes > 0) std::memcpy(dst + i * bytes, tensors[i].data_ptr(), bytes);
    } else {
      out.select(0, int64_t(i)).copy_(tensors[i]);
    }
  }
  return out;
}

Tensor numbers_tensor(const void* data, int64_t n, ScalarType dtype) {
  return from_blob(data, {n}, dtype);
}

}  // namespace detail

// ---- TensorDataset ----

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  STRIDE_CHECK(!tensors_.empty(), ValueError, "[TensorDataset] needs at least one tensor.");
  for (size_t i = 0; i < tensors_.size(); ++i) {
    STRIDE_CHECK(tensors_[i].defined() && tensors_[i].dim() >= 1, ShapeError,
                 "[TensorDataset] tensor ", i, " must have at least one dimension.");
    STRIDE_CHECK(tensors_[i].size(0) == tensors_[0].size(0), ShapeError, "[TensorDataset] tensor ",
                 i, " has ", tensors_[i].size(0), " rows but tensor 0 has ", tensors_[0].size(0),
                 "; all tensors must share their first dimension.");
  }
  size_ = tensors_[0].size(0);
}

std::vector<Tensor> TensorDataset::get(int64_t index) const {
  STRIDE_CHECK(index >= 0 && index < size_, IndexError, "[TensorDataset] index ", index,
               " is out of range for ", size_, " samples.");
  std::vector<Tensor> out;
  out.reserve(tensors_.size());
  for (const Tensor& t : tensors_) out.push_back(t.select(0, index));
  return out;
}

}  // namespace stride::data
