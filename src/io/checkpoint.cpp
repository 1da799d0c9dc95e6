#include "stride/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

#include <zlib.h>
#include <nlohmann/json.hpp>

#include "core/check.h"
#include "stride/io.h"

namespace stride {

namespace {

constexpr const char* kFormat = "checkpoint-v1";
constexpr const char* kModelPrefix = "model.";
constexpr const char* kOptimizerPrefix = "optimizer.";

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// uint64 values travel as strings: JSON numbers are doubles to most readers.
nlohmann::json generators_to_json(const std::map<std::string, GeneratorState>& gens) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, st] : gens) {
    j[name] = {{"seed", std::to_string(st.seed)}, {"offset", std::to_string(st.offset)}};
  }
  return j;
}

// Steps are counted on as a run resumes and written to metrics as JSON
// numbers, which most readers hold as doubles: 2^53 keeps them exact.
constexpr uint64_t kMaxStep = uint64_t(1) << 53;

// A metadata number: decimal digits only (no sign, space or suffix, which
// stoll would accept or wrap), at most `max`.
uint64_t parse_count(const std::string& text,
                     uint64_t max,
                     const std::string& what,
                     const std::string& path) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, err] = std::from_chars(text.data(), end, value);
  const bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  STRIDE_CHECK(digits_only && err == std::errc() && stop == end && value <= max, IOError,
               "[load_checkpoint] ", path, " has ", what, " \"", text.substr(0, 40),
               "\"; expected an integer in [0, ", max,
               "]. Hint: the metadata is corrupt or was edited by hand.");
  return value;
}

// CRC-32 (zlib's) of a tensor's bytes in row-major order, as the file holds
// them; 8 hex digits.
std::string crc32_text(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  uLong crc = crc32_z(0L, Z_NULL, 0);
  if (c.nbytes() > 0) crc = crc32_z(crc, p, c.nbytes());
  char text[9];
  std::snprintf(text, sizeof text, "%08lx", static_cast<unsigned long>(crc));
  return text;
}

// Note [Checkpoint checksums]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// safetensors has no checksum, and bytes damaged after a save (a disk, a
// copy, a hand) load as weights: generate printed "zzzz", eval "nan". So
// "stride.crc32" maps each tensor's name to the CRC-32 of its bytes; a load
// recomputes them and names the first tensor that differs. It is metadata
// only: other safetensors readers ignore it. Checkpoints without it (written
// before it existed) load unchecked.
void verify_checksums(const io::SafetensorsContents& file, const std::string& path) {
  const auto it = file.metadata.find("stride.crc32");
  if (it == file.metadata.end()) return;
  const auto sums = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  STRIDE_CHECK(sums.is_object(), IOError, "[load_checkpoint] ", path,
               " has malformed metadata: stride.crc32 is not a JSON object.");
  for (const auto& [name, t] : file.tensors) {
    STRIDE_CHECK(sums.contains(name) && sums[name].is_string(), IOError, "[load_checkpoint] ", path,
                 ": tensor \"", name, "\" has no checksum in stride.crc32.");
    const std::string actual = crc32_text(t), expected = sums[name].get<std::string>();
    STRIDE_CHECK(actual == expected, IOError, "[load_checkpoint] ", path, ": tensor \"", name,
                 "\" is corrupt: its bytes have CRC-32 ", actual, " but were saved with ", expected,
                 ". Hint: the file was damaged after it was written; use a copy or an "
                 "earlier checkpoint.");
  }
  STRIDE_CHECK(sums.size() == file.tensors.size(), IOError, "[load_checkpoint] ", path,
               ": stride.crc32 lists ", sums.size(), " tensors but the file holds ",
               file.tensors.size(), ".");
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointState& state) {
  io::NamedTensors tensors;
  for (const auto& [name, t] : state.model) tensors.push_back({kModelPrefix + name, t});
  nlohmann::json optimizer = nullptr;
  if (state.optimizer) {
    for (const auto& [key, t] : state.optimizer->tensors)
      tensors.push_back({kOptimizerPrefix + key, t});
    optimizer = {{"name", state.optimizer->optimizer}, {"scalars", state.optimizer->scalars}};
  }
  STRIDE_CHECK(state.step >= 0 && uint64_t(state.step) <= kMaxStep, ValueError,
               "[save_checkpoint] step must be in [0, 2^53]; got ", state.step, ".");
  STRIDE_CHECK(nlohmann::json::accept(state.config), ValueError,
               "[save_checkpoint] config must be JSON text; got: ", state.config.substr(0, 80));
  nlohmann::json sums = nlohmann::json::object();
  for (const auto& [name, t] : tensors) sums[name] = crc32_text(t);
  io::Metadata meta = {
      {"stride.crc32", sums.dump()},
      {"stride.format", kFormat},
      {"stride.step", std::to_string(state.step)},
      {"stride.config", state.config},
      {"stride.optimizer", optimizer.dump()},
      {"stride.scheduler", nlohmann::json(state.scheduler).dump()},
      {"stride.rng", generators_to_json(state.generators).dump()},
  };
  io::save_safetensors(path, tensors, meta);
}

CheckpointState load_checkpoint(const std::string& path) {
  io::SafetensorsContents file = io::load_safetensors(path);
  auto meta = [&](const char* key) -> const std::string& {
    auto it = file.metadata.find(key);
    STRIDE_CHECK(it != file.metadata.end(), IOError, "[load_checkpoint] ", path,
                 " is not a stride checkpoint: its metadata has no \"", key,
                 "\". Hint: checkpoints are written by save_checkpoint (stride train).");
    return it->second;
  };
  STRIDE_CHECK(meta("stride.format") == kFormat, IOError, "[load_checkpoint] ", path,
               " has format \"", meta("stride.format"), "\"; this stride reads \"", kFormat, "\".");
  verify_checksums(file, path);
  CheckpointState state;
  try {
    state.step = int64_t(parse_count(meta("stride.step"), kMaxStep, "step", path));
    state.config = meta("stride.config");
    const auto optimizer = nlohmann::json::parse(meta("stride.optimizer"));
    if (!optimizer.is_null()) {
      state.optimizer.emplace();
      state.optimizer->optimizer = optimizer.at("name").get<std::string>();
      state.optimizer->scalars = optimizer.at("scalars").get<std::map<std::string, double>>();
    }
    state.scheduler =
        nlohmann::json::parse(meta("stride.scheduler")).get<std::map<std::string, double>>();
    const auto rng = nlohmann::json::parse(meta("stride.rng"));
    for (const auto& [name, g] : rng.items()) {
      const uint64_t kAny = std::numeric_limits<uint64_t>::max();
      state.generators[name] = {
          parse_count(g.at("seed").get<std::string>(), kAny, "generator seed", path),
          parse_count(g.at("offset").get<std::string>(), kAny, "generator offset", path)};
    }
  } catch (const nlohmann::json::exception& e) {
    throw IOError(
        detail::str_cat("[load_checkpoint] ", path, " has malformed metadata: ", e.what()));
  }
  for (auto& [key, t] : file.tensors) {
    if (starts_with(key, kModelPrefix)) {
      state.model.insert(key.substr(std::char_traits<char>::length(kModelPrefix)), t);
    } else if (starts_with(key, kOptimizerPrefix) && state.optimizer) {
      state.optimizer->tensors.push_back(
          {key.substr(std::char_traits<char>::length(kOptimizerPrefix)), t});
    } else {
      throw IOError(detail::str_cat("[load_checkpoint] ", path, " holds an unexpected tensor \"",
                                    key, "\"."));
    }
  }
  return state;
}

CheckpointState capture_checkpoint(const nn::Module& model,
                                   const optim::Optimizer* optimizer,
                                   const optim::LRScheduler* scheduler,
                                   int64_t step,
                                   std::string config) {
  CheckpointState state;
  state.model = model.state_dict();
  if (optimizer) state.optimizer = optimizer->state_dict();
  if (scheduler) state.scheduler = scheduler->state_dict();
  state.generators["default"] = default_generator().get_state();
  state.step = step;
  state.config = std::move(config);
  return state;
}

void restore_checkpoint(const CheckpointState& state,
                        nn::Module& model,
                        optim::Optimizer* optimizer,
                        optim::LRScheduler* scheduler) {
  // A checkpoint restores a run exactly: a dtype change is a different run,
  // not something to convert silently (load_state_dict would).
  const nn::StateDict current = model.state_dict();
  for (const auto& [name, t] : state.model) {
    if (!current.contains(name)) continue;  // load_state_dict lists unexpected keys
    const Tensor& have = current[name];
    STRIDE_CHECK(have.dtype() == t.dtype(), DTypeError, "[restore_checkpoint] tensor \"", name,
                 "\" is ", to_string(t.dtype()), " in the checkpoint but ", to_string(have.dtype()),
                 " in the model. Hint: convert the model with to(", to_string(t.dtype()),
                 ") first, or load its state_dict explicitly.");
  }
  model.load_state_dict(state.model, /*strict=*/true);
  if (optimizer) {
    STRIDE_CHECK(state.optimizer.has_value(), ValueError,
                 "[restore_checkpoint] the checkpoint holds no optimizer state, but an optimizer "
                 "was given to restore.");
    optimizer->load_state_dict(*state.optimizer);
  }
  if (scheduler) {
    STRIDE_CHECK(!state.scheduler.empty(), ValueError,
                 "[restore_checkpoint] the checkpoint holds no scheduler state, but a scheduler "
                 "was given to restore.");
    scheduler->load_state_dict(state.scheduler);
  }
  if (auto it = state.generators.find("default"); it != state.generators.end()) {
    default_generator().set_state(it->second);
  }
}

}  // namespace stride
