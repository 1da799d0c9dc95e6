// stride._stride._data: what stride.utils.data (python/stride/utils/data/)
// takes from the C++ loader so that a Python DataLoader and a C++ one agree
// number for number: the samplers, the generator derivations of Note [Loader
// randomness] (include/stride/data/dataloader.h), the loader's default seed,
// its option checks and its worker-error wording. The loader itself is Python
// threads (docs/design.md, "Python"), so nothing here holds a Python object
// across threads.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.h"
#include "stride/data/dataloader.h"

namespace stride::python {

namespace {

using data::detail::FailedStep;

FailedStep failed_step_from(const std::string& step) {
  if (step == "get") return FailedStep::Get;
  if (step == "collate") return FailedStep::Collate;
  if (step == "start_stream") return FailedStep::StartStream;
  if (step == "next_example") return FailedStep::NextExample;
  return FailedStep::Other;
}

// The C++ loader's message for a failed step, so that both loaders word a
// worker's failure alike; the Python loader adds it as a note to the
// original exception instead of wrapping it.
std::string worker_error_message(int64_t worker_id,
                                 bool in_consumer_thread,
                                 int64_t epoch,
                                 const std::string& step,
                                 int64_t sample_index,
                                 int64_t batch_index,
                                 const std::string& original) {
  const std::exception_ptr error = data::detail::make_worker_error(
      worker_id, in_consumer_thread, epoch, failed_step_from(step), sample_index, batch_index,
      std::make_exception_ptr(std::runtime_error(original)));
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {  // a data::WorkerError
    return e.what();
  }
}

void check_options(int64_t batch_size,
                   bool shuffle,
                   bool drop_last,
                   int64_t num_workers,
                   int64_t prefetch_factor,
                   bool has_sampler,
                   bool iterable,
                   int64_t dataset_size) {
  data::DataLoaderOptions options;
  options.batch_size = batch_size;
  options.shuffle = shuffle;
  options.drop_last = drop_last;
  options.num_workers = num_workers;
  options.prefetch_factor = prefetch_factor;
  // Only whether a sampler is given matters to the checks.
  if (has_sampler) options.sampler = std::make_shared<data::SequentialSampler>(0);
  data::detail::check_options(options, iterable, dataset_size);
}

void bind_samplers(nb::module_& d) {
  nb::class_<data::Sampler>(d, "Sampler", "A C++ sampler: one epoch's indices from a generator.")
      .def("__len__", &data::Sampler::size)
      .def("indices", &data::Sampler::indices, nb::arg("generator"),
           "One epoch's indices; every random choice comes from `generator`.");
  nb::class_<data::SequentialSampler, data::Sampler>(d, "SequentialSampler")
      .def(nb::init<int64_t>(), nb::arg("n"));
  nb::class_<data::RandomSampler, data::Sampler>(d, "RandomSampler")
      .def(nb::init<int64_t, bool, std::optional<int64_t>>(), nb::arg("n"),
           nb::arg("replacement") = false, nb::arg("num_samples") = nb::none());
  nb::class_<data::SubsetRandomSampler, data::Sampler>(d, "SubsetRandomSampler")
      .def(nb::init<std::vector<int64_t>>(), nb::arg("indices"));
}

void bind_derivations(nb::module_& d) {
  d.def("sampler_generator", &data::sampler_generator, nb::arg("seed"), nb::arg("epoch"),
        "The generator of an epoch's sample order.");
  d.def("sample_generator", &data::sample_generator, nb::arg("seed"), nb::arg("epoch"),
        nb::arg("index"), "The generator handed to sample `index` in `epoch`.");
  d.def("worker_base_seed", &data::worker_base_seed, nb::arg("seed"), nb::arg("epoch"),
        "The base of the workers' generators in `epoch`.");
  d.def("worker_generator", &data::make_worker_generator, nb::arg("base_seed"),
        nb::arg("worker_id"), "Worker `worker_id`'s generator for a base seed.");
  d.def("default_loader_seed", &data::detail::default_loader_seed,
        "A loader's seed when none is given: one draw from the default generator.");
}

}  // namespace

void bind_data(nb::module_& m) {
  nb::module_ d = m.def_submodule("_data", "The C++ loader's samplers and derivations.");
  bind_samplers(d);
  bind_derivations(d);
  d.def("check_options", &check_options, nb::arg("batch_size"), nb::arg("shuffle"),
        nb::arg("drop_last"), nb::arg("num_workers"), nb::arg("prefetch_factor"),
        nb::arg("has_sampler"), nb::arg("iterable"), nb::arg("dataset_size"),
        "The C++ DataLoader's option checks (ValueError).");
  d.def("check_batch_indices", &data::detail::check_batch_indices, nb::arg("batches"),
        nb::arg("dataset_size"), "IndexError for a sampled index outside [0, dataset_size).");
  d.def("worker_error_message", &worker_error_message, nb::arg("worker_id"),
        nb::arg("in_consumer_thread"), nb::arg("epoch"), nb::arg("step"), nb::arg("sample_index"),
        nb::arg("batch_index"), nb::arg("original"),
        "The C++ loader's message for a failed step (get, collate, start_stream, "
        "next_example).");
}

}  // namespace stride::python
