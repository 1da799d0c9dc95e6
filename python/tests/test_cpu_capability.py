"""The CPU kernels' instruction-set level from Python: stride.show_config(),
stride.backends.cpu.get_cpu_capability(), and STRIDE_CPU_CAPABILITY forcing
the lowest level in a fresh process (the level is chosen once, at load)."""

import os
import subprocess
import sys

import numpy as np
import stride

LEVELS = ["DEFAULT", "AVX2", "AVX512"]

# A few ops whose CPU kernels differ per level (vector math, GEMM,
# reductions, softmax), printed with every digit, for the forced process.
PROGRAM = """
import numpy as np
import stride
x = stride.tensor(np.linspace(-3.0, 3.0, 96, dtype=np.float32).reshape(8, 12))
w = stride.tensor(np.cos(np.arange(12 * 5, dtype=np.float32)).reshape(12, 5))
outs = [stride.exp(x), x.matmul(w), stride.softmax(x, 1), x.sum(1), stride.tanh(x)]
print(stride.backends.cpu.get_cpu_capability())
for o in outs:
    print(" ".join(repr(float(v)) for v in o.numpy().ravel()))
"""


def run(env_level):
    env = dict(os.environ)
    env.pop("STRIDE_CPU_CAPABILITY", None)
    if env_level is not None:
        env["STRIDE_CPU_CAPABILITY"] = env_level
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, check=True
    )
    lines = out.stdout.splitlines()
    return lines[0], [np.array([float(v) for v in line.split()]) for line in lines[1:]]


def test_get_cpu_capability_spells_it_as_pytorch():
    assert stride.backends.cpu.get_cpu_capability() in LEVELS


def test_show_config_names_the_level(capsys):
    stride.show_config()
    out = capsys.readouterr().out
    assert out.startswith(f"stride {stride.__version__}\n")
    level = stride.backends.cpu.get_cpu_capability().lower()
    assert f"  CPU capability: {level}" in out


def test_forced_default_level_gives_the_same_numbers():
    best, best_outs = run(None)
    forced, forced_outs = run("default")
    assert best in LEVELS
    assert forced == "DEFAULT"
    # Other vector widths and FMA contraction change the last bits only.
    for a, b in zip(best_outs, forced_outs):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)
