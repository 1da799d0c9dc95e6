#!/usr/bin/env bash
# Proves tools/check_layers.sh catches what it is for: it must pass a clean
# tree and fail each planted violation. Usage: check_layers_test.sh REPO_ROOT
set -euo pipefail

check="$1/tools/check_layers.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0

# A fresh small tree with one file per layer, each including only downwards.
make_clean_tree() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"/{include/stride/nn,src/core,src/backends/cpu,src/autograd,src/ops,src/nn,src/optim,python/src,apps/stride}
  cd "$tmp/tree"
  printf '#pragma once\n' >include/stride/tensor.h
  printf '#pragma once\n#include "stride/tensor.h"\n' >include/stride/ops.h
  printf '#pragma once\n#include "stride/ops.h"\n' >include/stride/nn/module.h
  printf '#pragma once\n' >src/backends/cpu/vec_math.h
  printf '#pragma once\n' >src/backends/cpu/loops.h
  printf '#include "stride/tensor.h"\n' >src/core/x.cpp
  printf '#include "backends/kernels.h"\n#include "stride/ops.h"\n' >src/ops/z.cpp
  printf '#pragma once\n' >src/backends/kernels.h
  printf '#include "backends/cpu/loops.h"\n' >src/backends/cpu/kernel.cpp
  printf '#include "stride/nn/module.h"\n' >python/src/bind.cpp
  printf '#pragma once\n' >apps/stride/commands.h
  printf '#include "stride/nn/module.h"\n' >src/nn/y.cpp
  printf '#include "stride/tensor.h"\n' >src/autograd/engine.cpp
  cd - >/dev/null
}

# Runs the check on the temp tree; $1 is the expected outcome (pass|fail).
# A failure counts only when it names the planted file ($3), so that a broken
# script cannot pass this test by failing everything.
expect() {
  local want="$1" what="$2" planted="${3:-}" got=pass
  "$check" "$tmp/tree" >"$tmp/log" 2>&1 || got=fail
  if [[ "$got" == fail ]] && ! grep -q "^error: $planted:" "$tmp/log"; then
    got="fail without naming $planted"
  fi
  if [[ "$got" != "$want" ]]; then
    echo "FAILED: $what: expected $want, got $got"
    cat "$tmp/log"
    failed=1
  else
    echo "ok: $what ($want)"
  fi
}

make_clean_tree
expect pass "clean tree"

make_clean_tree
printf '#include "stride/ops.h"\n' >>"$tmp/tree/src/core/x.cpp"
expect fail "core includes ops" src/core/x.cpp

make_clean_tree
printf '#include "backends/cpu/vec_math.h"\n' >>"$tmp/tree/src/nn/y.cpp"
expect fail "nn includes a backend header" src/nn/y.cpp

make_clean_tree
printf '#include "stride/ops.h"\n' >>"$tmp/tree/src/autograd/engine.cpp"
expect fail "autograd includes ops" src/autograd/engine.cpp

make_clean_tree
printf '#include "stride/nn/module.h"\n' >>"$tmp/tree/include/stride/ops.h"
expect fail "a public ops header includes nn" include/stride/ops.h

make_clean_tree
printf '#include "backends/cpu/loops.h"\n' >>"$tmp/tree/src/ops/z.cpp"
expect fail "ops includes the CPU backend" src/ops/z.cpp

make_clean_tree
printf '#include "../../apps/stride/commands.h"\n' >>"$tmp/tree/python/src/bind.cpp"
expect fail "the Python bindings include the command line" python/src/bind.cpp

make_clean_tree
mkdir -p "$tmp/tree/src/newlayer"
printf '#include "stride/tensor.h"\n' >"$tmp/tree/src/newlayer/w.cpp"
expect fail "a file no layer claims" src/newlayer/w.cpp

exit "$failed"
