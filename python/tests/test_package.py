"""What the installed package ships besides the code."""

import os

import stride


def test_type_stubs_are_installed_beside_the_extension():
    here = os.path.dirname(stride.__file__)
    assert os.path.exists(os.path.join(here, "py.typed"))
    with open(os.path.join(here, "_stride.pyi")) as f:
        stubs = f.read()
    for name in ("class Tensor", "def zeros(", "def from_numpy(", "def matmul(", "def backward("):
        assert name in stubs, name


def test_the_version_is_the_cmake_projects():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        assert f"project(stride VERSION {stride.__version__}" in f.read()
