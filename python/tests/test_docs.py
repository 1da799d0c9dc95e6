"""Every public function and class of the Python API, and every public
method and property of stride.Tensor, Generator, dtype and device, has a
docstring beyond nanobind's signature line; the installed type stubs
(stride/_stride.pyi, written by nanobind's stubgen) carry them."""

import importlib
import inspect
import os

import pytest
import stride

MODULES = [
    "stride",
    "stride.linalg",
    "stride.masked",
    "stride.nn",
    "stride.nn.functional",
    "stride.nn.init",
    "stride.nn.utils",
    "stride.optim",
    "stride.optim.lr_scheduler",
    "stride.autograd",
    "stride.utils.data",
    "stride.profiler",
    "stride.doctor",
    "stride.cuda",
    "stride.special",
]
CLASSES = [stride.Tensor, stride.Generator, stride.dtype, stride.device]


def description(obj):
    """The docstring of obj beyond its signature ("" when there is none).
    A nanobind function counts only if every overload is documented."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        obj = obj.fget
    signatures = getattr(obj, "__nb_signature__", None)
    if isinstance(signatures, tuple) and not isinstance(obj, type):
        docs = [(doc or "").strip() for _, doc, *_ in signatures]
        return docs[0] if all(docs) else ""
    lines = inspect.cleandoc(getattr(obj, "__doc__", None) or "").split("\n")
    # A Python wrapper that copied a nanobind function's __doc__ starts with
    # the signature (stride.nn.init's).
    name = getattr(obj, "__name__", None)
    while lines and name and lines[0].startswith(name + "("):
        lines = lines[1:]
    return "\n".join(lines).strip()


def public_callables(module):
    for name in dir(module):
        obj = getattr(module, name)
        if not name.startswith("_") and callable(obj) and not inspect.ismodule(obj):
            yield name, obj


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_callable_of_the_module_is_documented(module_name):
    module = importlib.import_module(module_name)
    missing = [name for name, obj in public_callables(module) if not description(obj)]
    assert missing == []


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_public_method_and_property_of_the_class_is_documented(cls):
    missing = [
        name
        for name in dir(cls)
        if not name.startswith("_") and not description(inspect.getattr_static(cls, name))
    ]
    assert missing == []


def test_the_check_sees_a_missing_docstring():
    def undocumented():
        pass

    assert description(undocumented) == ""
    assert description(stride.Tensor.exp) != ""
    assert description(stride.Tensor.shape.fget) != ""


def test_an_overloaded_name_shows_its_docstring_once():
    # Every overload carries the same text; nanobind then prints it once.
    doc = description(stride.Tensor.add)
    assert "alpha" in doc
    assert stride.Tensor.add.__doc__.count(doc) == 1
    assert stride.add.__doc__.count(doc) == 1
    assert "Overloaded function" not in stride.rand.__doc__


def test_an_in_place_op_is_documented_as_such():
    assert description(stride.Tensor.exp_) == "In-place version of exp(); returns self."
    assert "in place" in description(stride.Tensor.fill_).lower()


def test_the_installed_stubs_carry_the_docstrings():
    with open(os.path.join(os.path.dirname(stride.__file__), "_stride.pyi")) as f:
        stubs = f.read()
    for doc in (
        description(stride.exp),  # the op table (op_docs.cpp)
        description(stride.Tensor.view),
        description(stride.Tensor.shape),  # a property
        description(stride.Generator.manual_seed),
        description(stride.full_like),
    ):
        assert doc and doc in stubs, doc
    # An overloaded name's docstring appears once per place it is bound
    # (stride.add and Tensor.add), not once per overload.
    assert stubs.count(description(stride.add)) == 2
