// stride.Generator: the C++ Philox generator (stride/generator.h) as
// torch.Generator, the generator= argument of the random functions, and
// Generator.numpy(), the way Python code draws NumPy numbers from a stride
// stream without sharing NumPy's global one.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>

#include "bindings.h"
#include "op_docs.h"
#include "stride/data/sampler.h"

namespace stride::python {

namespace {

// PyTorch's default seed, which stride's default generator also starts from:
// `stride.Generator()` then draws what `torch.Generator()` would be seeded
// with, and what stride.rand draws before any manual_seed.
constexpr uint64_t kPyTorchDefaultSeed = 67280421310721ull;

// Note [NumPy from a stride generator]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Generator.numpy() takes ONE 64-bit draw from the stride stream and seeds a
// fresh numpy.random.Generator (PCG64 through NumPy's SeedSequence) with it.
// The NumPy generator is then independent of the stride stream, and two calls
// give two different NumPy streams. A dataset's __getitem__(index, generator)
// gets a generator derived from (loader seed, epoch, index) only, so
// generator.numpy() draws the same NumPy numbers for a sample whatever the
// number of workers, and different numbers for every sample and epoch (the
// duplicated-NumPy-state bug of forked PyTorch workers cannot happen).
nb::object numpy_generator(Generator& gen) {
  nb::module_ random = nb::module_::import_("numpy.random");
  return random.attr("Generator")(random.attr("PCG64")(gen.next_u64()));
}

// torch.Generator.seed(): a seed nobody chose, from the OS's entropy.
uint64_t nondeterministic_seed() {
  std::random_device device;
  return (uint64_t(device()) << 32) ^ uint64_t(device());
}

std::string generator_repr(const Generator& gen) {
  const GeneratorState s = gen.get_state();
  return "<stride.Generator seed=" + std::to_string(s.seed) +
         " offset=" + std::to_string(s.offset) + ">";
}

void bind_generator_class(nb::module_& m) {
  nb::class_<Generator>(m, "Generator",
                        "A Philox4x32-10 random stream, as torch.Generator. The numbers depend "
                        "only on the seed and how many were drawn, never on threads or layouts. "
                        "Generators cannot be copied; fork(stream) derives an independent one.")
      .def(nb::init<uint64_t>(), nb::arg("seed") = kPyTorchDefaultSeed,
           "A generator starting at counter 0 of `seed` (PyTorch's default seed if omitted).")
      .def(
          "manual_seed",
          [](nb::object self, uint64_t seed) {
            nb::cast<Generator&>(self).manual_seed(seed);
            return self;
          },
          nb::arg("seed"),
          "Restarts the stream from counter 0 of `seed`; returns self "
          "(`g = stride.Generator().manual_seed(0)`).")
      .def(
          "seed",
          [](Generator& g) {
            const uint64_t seed = nondeterministic_seed();
            g.manual_seed(seed);
            return seed;
          },
          "Reseeds from the OS's entropy and returns the new seed (as torch.Generator.seed).")
      .def("initial_seed", &Generator::seed, "The seed the stream started from.")
      .def(
          "get_state",
          [](const Generator& g) {
            const GeneratorState s = g.get_state();
            return std::make_pair(s.seed, s.offset);
          },
          "The whole state as a tuple (seed, offset): offset counts the Philox counters "
          "consumed. set_state(get_state()) replays the stream from here.")
      .def(
          "set_state",
          [](nb::object self, std::pair<uint64_t, uint64_t> state) {
            nb::cast<Generator&>(self).set_state({state.first, state.second});
            return self;
          },
          nb::arg("state"), "Restores a state from get_state(); returns self.")
      .def("fork", &Generator::fork, nb::arg("stream"),
           "An independent generator determined by (this seed, stream) only; this one is "
           "unchanged.")
      .def("next_u64", &Generator::next_u64,
           "One 64-bit draw (consumes one counter): for seeding other generators.")
      .def("numpy", &numpy_generator,
           "A new numpy.random.Generator seeded with one draw of this stream (Note [NumPy from "
           "a stride generator] in python/src/generator.cpp): independent of this stream "
           "afterwards, and a different one at every call.")
      .def("__repr__", &generator_repr);
  m.attr("default_generator") = nb::cast(&default_generator(), nb::rv_policy::reference);
}

// torch.randperm, which the C++ API has as a sampler: the permutation is
// RandomSampler's (Fisher-Yates on unbiased 64-bit draws), so it is the order
// a shuffling DataLoader visits when handed the same generator state.
Tensor randperm(int64_t n, Generator* gen, nb::handle dtype, nb::handle device) {
  if (n < 0) {
    throw nb::value_error(
        ("[randperm] n must be non-negative; got " + std::to_string(n) + ".").c_str());
  }
  Tensor t = tensor(data::RandomSampler(n).indices(gen ? *gen : default_generator()));
  if (const auto d = optional_dtype(dtype)) t = t.to(*d);
  if (const auto d = optional_device(device)) t = t.to(*d);
  return t;
}

// The random factories, with generator= (None: the default generator, as in
// PyTorch).
void bind_factories_with_generator(nb::module_& m) {
  const auto shaped = [&m](const char* name, auto make) {
    m.def(
        name,
        [make, what = std::string(name) + "(): size"](nb::args size, Generator* gen,
                                                      nb::handle dtype, nb::handle device,
                                                      bool requires_grad) {
          Tensor t = make(shape_from_args(size, what.c_str()), options_from(dtype, device), gen);
          if (requires_grad) t.requires_grad_(true);
          return t;
        },
        nb::arg("size"), nb::kw_only(), nb::arg("generator").none() = nb::none(),
        nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
        nb::arg("requires_grad") = false, op_doc(name).c_str());
  };
  shaped("rand", [](IntArrayRef s, TensorOptions o, Generator* g) { return rand(s, o, g); });
  shaped("randn", [](IntArrayRef s, TensorOptions o, Generator* g) { return randn(s, o, g); });
  m.def(
      "randint",
      [](int64_t low, nb::handle high_or_size, nb::handle size, Generator* gen, nb::handle dtype,
         nb::handle device) {
        // randint(high, size) as well as randint(low, high, size), as torch's.
        const std::optional<int64_t> high = index_value(high_or_size, "randint(): high");
        if (!high && size.is_none()) size = high_or_size;
        const int64_t lo = high ? low : 0, hi = high ? *high : low;
        TensorOptions options = options_from(dtype, device);
        if (dtype.is_none()) options = options.dtype(kInt64);
        return randint(lo, hi, int_list(size, "randint(): size"), options, gen);
      },
      nb::arg("low"), nb::arg("high") = nb::none(), nb::arg("size") = nb::none(), nb::kw_only(),
      nb::arg("generator").none() = nb::none(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), op_doc("randint").c_str());
  m.def(
      "randint_like",
      [](const Tensor& t, int64_t low, std::optional<int64_t> high, Generator* gen,
         nb::handle dtype, nb::handle device, bool requires_grad,
         nb::handle /*memory_format: always contiguous*/) {
        // randint_like(input, high) or randint_like(input, low, high).
        const int64_t lo = high ? low : 0, hi = high ? *high : low;
        Tensor r = randint(lo, hi, t.sizes(), options_like(t, dtype, device), gen);
        if (requires_grad) r.requires_grad_(true);
        return r;
      },
      nb::arg("input"), nb::arg("low"), nb::arg("high") = nb::none(), nb::kw_only(),
      nb::arg("generator").none() = nb::none(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      nb::arg("memory_format") = nb::none(), op_doc("randint_like").c_str());
  m.def("randperm", &randperm, nb::arg("n"), nb::kw_only(),
        nb::arg("generator").none() = nb::none(), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(),
        "A random permutation of 0..n-1 (int64 unless dtype= is given).");
  for (const bool normal : {false, true}) {
    const char* name = normal ? "randn_like" : "rand_like";
    m.def(
        name,
        [normal](const Tensor& t, Generator* gen, nb::handle dtype, nb::handle device,
                 bool requires_grad, nb::handle /*memory_format: always contiguous*/) {
          const TensorOptions o = options_like(t, dtype, device);
          Tensor r = normal ? randn(t.sizes(), o, gen) : rand(t.sizes(), o, gen);
          if (requires_grad) r.requires_grad_(true);
          return r;
        },
        nb::arg("input"), nb::kw_only(), nb::arg("generator").none() = nb::none(),
        nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
        nb::arg("requires_grad") = false, nb::arg("memory_format") = nb::none(),
        op_doc(name).c_str());
  }
}

// The in-place samplers, with generator= (t.normal_(0, 1, generator=g)).
void bind_inplace_with_generator() {
  auto cls = nb::borrow<nb::class_<Tensor>>(nb::type<Tensor>());
  cls.def(
      "uniform_",
      [](nb::object self, double from, double to, Generator* gen) {
        nb::cast<Tensor&>(self).uniform_(from, to, gen);
        return self;
      },
      nb::arg("from") = 0.0, nb::arg("to") = 1.0, nb::kw_only(),
      nb::arg("generator").none() = nb::none(), op_doc("uniform_").c_str());
  cls.def(
      "normal_",
      [](nb::object self, double mean, double std, Generator* gen) {
        nb::cast<Tensor&>(self).normal_(mean, std, gen);
        return self;
      },
      nb::arg("mean") = 0.0, nb::arg("std") = 1.0, nb::kw_only(),
      nb::arg("generator").none() = nb::none(), op_doc("normal_").c_str());
  cls.def(
      "random_",
      [](nb::object self, int64_t from, std::optional<int64_t> to, Generator* gen) {
        // random_(n) draws from [0, n), random_(a, b) from [a, b), as torch's.
        auto& t = nb::cast<Tensor&>(self);
        if (to) {
          t.random_(from, *to, gen);
        } else {
          t.random_(0, from, gen);
        }
        return self;
      },
      nb::arg("from"), nb::arg("to") = nb::none(), nb::kw_only(),
      nb::arg("generator").none() = nb::none(),
      "In place: integers drawn uniformly from [from, to) (from [0, from) when to is None), "
      "as torch.Tensor.random_.");
  cls.def(
      "bernoulli_",
      [](nb::object self, double p, Generator* gen) {
        nb::cast<Tensor&>(self).bernoulli_(p, gen);
        return self;
      },
      nb::arg("p") = 0.5, nb::kw_only(), nb::arg("generator").none() = nb::none(),
      op_doc("bernoulli_").c_str());
}

}  // namespace

void bind_generator(nb::module_& m) {
  bind_generator_class(m);
  bind_factories_with_generator(m);
  bind_inplace_with_generator();
}

}  // namespace stride::python
