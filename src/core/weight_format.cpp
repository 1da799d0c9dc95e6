#include "stride/weight_format.h"

namespace stride {

std::string_view to_string(WeightFormat format) {
  switch (format) {
    case WeightFormat::Float32:
      return "float32";
    case WeightFormat::BFloat16:
      return "bf16";
    case WeightFormat::Int8:
      return "int8";
    case WeightFormat::Int4:
      return "int4";
  }
  return "?";
}

std::optional<WeightFormat> parse_weight_format(std::string_view name) {
  if (name == "float32" || name == "fp32") return WeightFormat::Float32;
  if (name == "bf16") return WeightFormat::BFloat16;
  if (name == "int8") return WeightFormat::Int8;
  if (name == "int4") return WeightFormat::Int4;
  return std::nullopt;
}

bool is_blocked(WeightFormat format) {
  return format == WeightFormat::Int8 || format == WeightFormat::Int4;
}

ScalarType storage_dtype(WeightFormat format) {
  switch (format) {
    case WeightFormat::Float32:
      return kFloat32;
    case WeightFormat::BFloat16:
      return kBFloat16;
    default:
      return kUInt8;
  }
}

int64_t stored_row_size(WeightFormat format, int64_t cols) {
  switch (format) {
    case WeightFormat::Int8:
      return cols / kWeightBlock * kInt8BlockBytes;
    case WeightFormat::Int4:
      return cols / kWeightBlock * kInt4BlockBytes;
    default:
      return cols;
  }
}

}  // namespace stride
