// The Python that runs the PyTorch interop tests: $STRIDE_TORCH_PYTHON, else
// the virtual environment `make venv` makes (build-venv, with torch and
// safetensors from PyPI). Those tests skip themselves when neither imports
// torch and safetensors.
#pragma once

#include <cstdlib>
#include <string>

namespace stride::testing {

inline std::string torch_python() {
  static const std::string python = [] {
    const char* chosen = std::getenv("STRIDE_TORCH_PYTHON");
    std::string candidate = chosen ? chosen : STRIDE_SOURCE_DIR "/build-venv/bin/python";
    std::string probe = candidate;
    probe.append(" -c 'import torch, safetensors' >/dev/null 2>&1");
    return std::system(probe.c_str()) == 0 ? candidate : std::string();
  }();
  return python;
}

}  // namespace stride::testing
