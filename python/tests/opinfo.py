"""PyTorch's OpInfo database as stride's breadth test (docs/ops.md).

PyTorch describes every op it tests in one list,
torch.testing._internal.common_methods_invocations.op_db: the op, the dtypes
it supports, functions that make sample inputs, whether it has gradients.
This module walks that list: for each entry it finds stride's op of the same
name, runs it on PyTorch's own sample inputs (converted to stride tensors)
and compares its outputs, gradients and, where PyTorch has them, second-order
gradients with torch's. The result is docs/ops.md, which test_opinfo.py
keeps current.

    build-venv/bin/python python/tests/opinfo.py --write docs/ops.md
    build-venv/bin/python python/tests/opinfo.py --only nn.functional.relu

The entries stride has run in child processes, so that a crash in stride (a
segfault) costs the entry that caused it and not the report.
"""

import argparse
import collections
import dataclasses
import functools
import json
import os
import sys
import types
import warnings
from pathlib import Path

import stride
from opinfo_children import run_in_children
from opinfo_report import DTYPES, FAMILIES, entry_table, report
from opinfo_values import (
    LOW_PRECISION,
    SampleCopy,
    Skipped,
    Unsupported,
    comparable,
    compare,
    dtype_name,
    entry_tolerance,
    flat_outputs,
    promoted_tensor,
    sample_tensors,
    short_reason,
    skip_reason,
    stride_sample,
    stride_to_torch,
    tensor_to_stride,
)

# Set by load_torch(): test_opinfo.py skips itself where torch or expecttest
# (which op_db's module imports) is missing.
torch = None
OP_DB = None

GRAD_DTYPES = ("float32", "float64")

# The OpInfo name prefix of each family of the report (opinfo_report.py);
# the rest are torch.* functions and Tensor methods.
FAMILY_PREFIXES = {
    "torch.nn.functional": "nn.functional.",
    "linalg": "linalg.",
    "special": "special.",
    "fft": "fft.",
}


def load_torch():
    """Imports torch and PyTorch's op database (about 5 s)."""
    global torch, OP_DB
    if OP_DB is None:
        import torch as torch_module
        from torch.testing._internal.common_methods_invocations import op_db

        torch = torch_module
        OP_DB = op_db
    return OP_DB


# --- Finding stride's counterpart -------------------------------------------


@dataclasses.dataclass
class Counterpart:
    """stride's op for an OpInfo entry: the name the report shows and how to
    call it the way the entry calls torch's."""

    name: str
    call: object


def family_of(name):
    for family, prefix in FAMILY_PREFIXES.items():
        if name.startswith(prefix):
            return family
    return FAMILIES[0]


def attribute_path(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def method_caller(name):
    """Calls the Tensor method (or reads the property) `name` of the first
    argument, as torch.Tensor.<name>(input, ...) does."""

    def call(tensor, *args, **kwargs):
        attribute = getattr(tensor, name)
        return attribute(*args, **kwargs) if callable(attribute) else attribute

    return call


def lookup(name):
    """stride's function or Tensor method for a torch name, or None."""
    path = name.removeprefix("torch.")
    if not path.startswith("__"):
        function = attribute_path(stride, path)
        # stride.float and stride.bool are dtypes, not the Tensor methods.
        if callable(function) and not isinstance(function, (type, types.ModuleType)):
            return Counterpart(f"stride.{path}", function)
    # dir(), not hasattr(): the class's metaclass has __or__ and __ror__.
    if "." not in path and path in dir(stride.Tensor):
        return Counterpart(f"Tensor.{path}", method_caller(path))
    return None


def missing_name(op):
    """What stride lacks for an entry: the Tensor method (or property) where
    torch has that and no function (torch.float is a dtype), else the
    function."""
    path = tested_name(op).removeprefix("torch.")
    method_only = not callable(attribute_path(torch, path)) and hasattr(torch.Tensor, path)
    if path.startswith("__") or ("." not in path and method_only):
        return f"Tensor.{path}"
    return f"stride.{path}"


def code_names(fn):
    """The global and attribute names a function's code (nested lambdas
    included) uses."""
    names, codes = set(), [getattr(fn, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is not None:
            names.update(code.co_names)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def tested_name(op):
    """The name of the op an entry tests: OpInfo names its in-place random
    ops after the function (`uniform` calls Tensor.uniform_)."""
    in_place = op.name + "_"
    return in_place if in_place in code_names(op.op) else op.name


def defined_by_opinfo(fn):
    """Whether the entry's op is a function of PyTorch's test code (a lambda
    that reorders arguments, calls a method or sets a seed) rather than
    torch's op itself."""
    module = getattr(fn, "__module__", None) or ""
    return isinstance(fn, types.FunctionType) and module.startswith("torch.testing._internal")


def rebound(fn, **names):
    """The entry's own function with some of its global names replaced."""
    namespace = {**fn.__globals__, **names}
    copy = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__  # keyword-only defaults (upper=False, idx=0)
    return copy


def call_without_seed(fn, *args, **kwargs):
    """wrapper_set_seed for stride: the walk seeds stride before each call."""
    return fn(*args, **kwargs)


def find_counterpart(op):
    """stride's counterpart of an entry, by its name and then its aliases.
    Where the entry's op is its own function, that function runs with
    `torch` meaning stride: `lambda x, shape: x.view(shape)` or
    `torch.where(condition, self, other)` call stride's op as they call
    torch's."""
    found = lookup(tested_name(op))
    if found is not None:
        if defined_by_opinfo(op.op):
            found.call = rebound(op.op, torch=stride, wrapper_set_seed=call_without_seed)
        return found
    for alias in op.aliases:
        found = lookup(alias.name)
        if found is not None:
            return found
    return None


# --- Running one sample ----------------------------------------------------


@dataclasses.dataclass
class Outcome:
    """A sample's results: the failure of its values and of its gradients
    (None: passed or not checked), whether gradients were checked, and the
    exception behind a failure (--only prints it whole)."""

    values: str = None
    grads: str = None
    checked_grads: bool = False
    error: Exception = None


def forward(op, fn, args):
    """Calls fn the way the entry's gradient tests do (OpInfo's
    gradcheck_wrapper makes some inputs symmetric or triangular first). The
    wrappers call torch's functions (torch.diag_embed for cholesky_inverse,
    torch.masked's output mask for the masked ops), so on stride's inputs
    they run with `torch` meaning stride, as the entry's own function does."""
    wrapper = op.gradcheck_wrapper
    if isinstance(args.input, stride.Tensor) and defined_by_opinfo(wrapper):
        wrapper = rebound(wrapper, torch=stride)
    return wrapper(fn, args.input, *args.args, **args.kwargs)


def is_random(op):
    """Entries whose op draws random numbers (OpInfo wraps them to set a
    seed) or returns uninitialised memory: torch's and stride's values cannot
    agree, their shapes and dtypes can."""
    return "wrapper_set_seed" in code_names(op.op) or op.has_nondeterministic_output


def torch_is_deterministic(op, sample, output):
    """Whether torch gives the same output under other seeds: a random op's
    sample without randomness (dropout with p=0) can then be compared. Two
    seeds, as a small sample can draw the same mask under two."""
    if op.has_nondeterministic_output:
        return False
    return all(identical(torch_output_under_seed(op, sample, seed), output) for seed in (1, 2))


def torch_output_under_seed(op, sample, seed):
    def call_with_seed(fn, *args, **kwargs):
        # Replaces OpInfo's wrapper_set_seed, which seeds 42 for every call.
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            return fn(*args, **kwargs)

    fn = rebound(op.op, wrapper_set_seed=call_with_seed) if defined_by_opinfo(op.op) else op.op
    return call_with_seed(forward, op, fn, sample)


def identical(output, other):
    try:
        torch.testing.assert_close(
            comparable(output), comparable(other), rtol=0, atol=0, equal_nan=True
        )
    except (AssertionError, TypeError, ValueError):
        return False
    return True


def precise_outputs(op, sample, compute):
    """A memoised thunk of compute(promoted copy of the sample), for a
    float32 or bfloat16 sample (else None); None where torch fails on it."""
    if not any(dtype_name(t.dtype) in LOW_PRECISION for t in sample_tensors(sample)):
        return None

    @functools.cache
    def thunk():
        try:
            return compute(SampleCopy(sample, promoted_tensor))
        except Exception:  # torch without float64 for this op: no second opinion
            return None

    return thunk


def check_sample(op, fn, sample, tolerance, want_grads):
    """Runs a sample through torch and stride and compares their values,
    then their gradients."""
    outcome = Outcome()
    try:
        stride_args = stride_sample(sample)
    except Unsupported as error:
        outcome.values = str(error)
        return outcome
    except Skipped:
        raise
    except Exception as error:  # from_numpy, to or as_strided of stride's
        outcome.values, outcome.error = f"converting fails: {short_reason(error)}", error
        return outcome
    try:
        expected = forward(op, op.op, sample)
    except Exception as error:
        raise Skipped("failing in torch") from error
    expected_values = comparable(expected)
    compare_values = not is_random(op) or torch_is_deterministic(op, sample, expected_values)
    stride.manual_seed(0)
    try:
        actual = forward(op, fn, stride_args)
    except Exception as error:  # any error of stride's fails the sample
        outcome.values, outcome.error = short_reason(error), error
        return outcome
    precise = precise_outputs(op, sample, lambda copy: comparable(forward(op, op.op, copy)))
    outcome.values = compare(
        comparable(actual), expected_values, tolerance, compare_values, precise
    )
    if outcome.values is None and want_grads and compare_values:
        check_grads(op, sample, stride_args, expected, actual, tolerance, outcome)
    return outcome


@dataclasses.dataclass
class GradProblem:
    """What the gradient checks of a sample differentiate: the inputs that
    require grad, the positions of the differentiable outputs among the
    outputs' leaves, and the random vectors they are multiplied by."""

    inputs: list
    positions: list
    grad_outputs: list
    vectors: list  # for the second order; None where OpInfo has none


def grad_problem(op, sample, expected):
    inputs = [t for t in sample_tensors(sample) if t.requires_grad and t.is_floating_point()]
    inputs = list({id(t): t for t in inputs}.values())
    leaves = flat_outputs(sample.output_process_fn_grad(expected))
    positions = [i for i, leaf in enumerate(leaves) if differentiable(leaf)]
    if not inputs or not positions:
        return None
    grad_outputs = random_like([leaves[i] for i in positions], seed=1)
    vectors = random_like(inputs, seed=2) if torch_has_second_order(op) else None
    return GradProblem(inputs, positions, grad_outputs, vectors)


def torch_has_second_order(op):
    """OpInfo's supports_gradgrad, unless the entry expects torch's double
    VJP to fail (the chunked linear_cross_entropy, whose backward is not
    differentiable): there torch's first-order gradients are constants, and
    its second-order ones would read as zeros rather than as missing."""
    import unittest

    from torch.testing._internal.opinfo.core import DecorateInfo

    if not op.supports_gradgrad:
        return False
    return not any(
        isinstance(d, DecorateInfo)
        and (d.cls_name, d.test_name) == ("TestOperators", "test_vjpvjp")
        and unittest.expectedFailure in d.decorators
        for d in op.decorators
    )


def differentiable(leaf):
    return isinstance(leaf, torch.Tensor) and leaf.requires_grad


def random_like(tensors, seed):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(t.shape, dtype=t.dtype, generator=generator) for t in tensors]


def selected_outputs(sample, output, problem):
    leaves = flat_outputs(sample.output_process_fn_grad(output))
    return [leaves[i] for i in problem.positions]


def torch_derivatives(op, sample, args, problem):
    """torch's first- and second-order gradients (None where OpInfo has no
    second order, or where torch's own double backward fails, as
    native_layer_norm's without a weight does) on a copy of the sample,
    unused inputs' as zeros."""
    outputs = selected_outputs(sample, forward(op, op.op, args), problem)
    inputs = [args.of(t) for t in problem.inputs]
    grad_outputs = [g.to(o.dtype) for g, o in zip(problem.grad_outputs, outputs)]
    second_order = problem.vectors is not None
    first = torch.autograd.grad(
        outputs, inputs, grad_outputs, allow_unused=True, create_graph=second_order
    )
    second = None
    if second_order:
        vectors = [v.to(x.dtype) for v, x in zip(problem.vectors, inputs)]
        try:
            second = zeros_for_unused(
                second_order_grads(torch.autograd, first, inputs, vectors), inputs
            )
        except RuntimeError:  # torch has no second opinion on this sample
            second = None
    return zeros_for_unused(first, inputs), second


def zeros_for_unused(grads, inputs):
    return [torch.zeros_like(x) if g is None else g.detach() for g, x in zip(grads, inputs)]


def second_order_grads(autograd, grads, inputs, vectors):
    """The gradient of sum(<grad_i, v_i>) over the grads that depend on the
    inputs; the others are constants, whose contribution is zero."""
    pairs = [(g, v) for g, v in zip(grads, vectors) if g is not None and g.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    grads, vectors = zip(*pairs)
    return autograd.grad(list(grads), inputs, grad_outputs=list(vectors), allow_unused=True)


def check_grads(op, sample, stride_args, expected, actual, tolerance, outcome):
    """Compares the first-order gradients of every differentiable output
    with respect to every input that requires grad, then the second-order
    ones where OpInfo has them; records the first failure in outcome."""
    problem = grad_problem(op, sample, expected)
    if problem is None:
        return
    outcome.checked_grads = True
    identity = SampleCopy(sample, lambda t: t)
    expected_first, expected_second = torch_derivatives(op, sample, identity, problem)
    precise = precise_outputs(op, sample, lambda copy: torch_derivatives(op, sample, copy, problem))
    inputs = [stride_args.of(t) for t in problem.inputs]
    try:
        actual_first = stride.autograd.grad(
            selected_outputs(sample, actual, problem),
            inputs,
            grad_outputs=[tensor_to_stride(g) for g in problem.grad_outputs],
            allow_unused=True,
            create_graph=problem.vectors is not None,
        )
    except Exception as error:
        outcome.grads, outcome.error = f"grad: {short_reason(error)}", error
        return
    reason = compare_grads(actual_first, expected_first, tolerance, precise, 0)
    if reason is not None or problem.vectors is None or expected_second is None:
        outcome.grads = reason and f"grad: {reason}"
        return
    try:
        vectors = [tensor_to_stride(v) for v in problem.vectors]
        actual_second = second_order_grads(stride.autograd, actual_first, inputs, vectors)
    except Exception as error:
        outcome.grads, outcome.error = f"gradgrad: {short_reason(error)}", error
        return
    reason = compare_grads(actual_second, expected_second, tolerance, precise, 1)
    outcome.grads = reason and f"gradgrad: {reason}"


def compare_grads(actual, expected, tolerance, precise, order):
    """Compares stride's gradients (None: zero) with torch's; precise()[order]
    is torch's in float64."""
    actual = [
        torch.zeros_like(e) if a is None else stride_to_torch(a) for a, e in zip(actual, expected)
    ]
    precise_order = precise and (lambda: precise() and precise()[order])
    return compare(actual, expected, tolerance, True, precise_order)


# --- Running one entry -----------------------------------------------------


@dataclasses.dataclass
class DtypeResult:
    """One dtype of an entry: its status (pass, fail, or skip where every
    sample was left out), its values' and gradients' columns, the first
    failure of each, and why no sample ran where none did."""

    status: str = "skip"
    values: str = "—"
    grads: str = "—"
    value_failure: str = ""
    grad_failure: str = ""
    note: str = ""
    samples: int = 0
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)


def tried_dtypes(op):
    """The walk's dtypes that the entry supports on CPU (stride has them all)."""
    supported = {dtype_name(d) for d in op.supported_dtypes("cpu")}
    return [name for name in DTYPES if name in supported]


def seeded_samples(op, dtype, requires_grad):
    torch.manual_seed(0)
    stride.manual_seed(0)
    return list(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=requires_grad))


def run_dtype(op, fn, dtype, report_failure=None):
    """Runs every sample of a dtype. report_failure(sample, outcome), where
    given, hears of each failing sample (--only)."""
    want_grads = op.supports_autograd and dtype in GRAD_DTYPES
    tolerance = entry_tolerance(op, getattr(torch, dtype))
    result = DtypeResult()
    try:
        samples = seeded_samples(op, dtype, want_grads)
    except Exception as error:
        result.note = f"torch's sample inputs fail: {short_reason(error)}"
        return result
    outcomes = []
    for sample in samples:
        try:
            skip = skip_reason(sample)
            if skip is not None:
                raise Skipped(skip)
            outcome = check_sample(op, fn, sample, tolerance, want_grads)
        except Skipped as skipped:
            result.skipped[str(skipped)] += 1
            continue
        outcomes.append(outcome)
        if (outcome.values or outcome.grads) and report_failure is not None:
            report_failure(sample, outcome)
    if outcomes:
        value_failures = [o.values for o in outcomes if o.values]
        grad_failures = [o.grads for o in outcomes if o.grads]
        grads_checked = any(o.checked_grads for o in outcomes)
        result.samples = len(outcomes)
        result.values = "fail" if value_failures else "pass"
        result.grads = "fail" if grad_failures else "pass" if grads_checked else "—"
        result.status = "fail" if value_failures or grad_failures else "pass"
        result.value_failure = (value_failures + [""])[0]
        result.grad_failure = (grad_failures + [""])[0]
    return result


def run_entry(op, report_failure=None, on_dtype=None):
    """An entry's row of the report (a dict, as the child processes send
    it). on_dtype(dtype), where given, hears of each dtype as it starts."""
    counterpart = find_counterpart(op)
    row = {"name": op.full_name, "family": family_of(op.name), "stride": "", "dtypes": {}}
    if counterpart is None:
        return {**row, "values": "—", "grads": "—", "reason": f"no {missing_name(op)}"}
    row["stride"] = counterpart.name
    dtypes = tried_dtypes(op)
    if not dtypes:
        reason = f"no CPU dtype among {', '.join(DTYPES)}"
        return {**row, "values": "—", "grads": "—", "reason": reason}
    results = {}
    for dtype in dtypes:
        if on_dtype is not None:
            on_dtype(dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results[dtype] = run_dtype(op, counterpart.call, dtype, report_failure)
    return {**row, **summarize(op, results)}


def summarize(op, results):
    """An entry's columns from its dtypes' results."""
    ran = [r for r in results.values() if r.samples]
    values = "—" if not ran else "fail" if any(r.values == "fail" for r in ran) else "pass"
    grad_columns = {r.grads for r in ran}
    if not op.supports_autograd or not any(d in results for d in GRAD_DTYPES):
        grads = "n/a"
    elif "fail" in grad_columns:
        grads = "fail"
    else:
        grads = "pass" if "pass" in grad_columns else "—"
    # Values' failures first: the gradients of wrong values say little.
    reasons = [r.value_failure for r in results.values()]
    reasons += [r.grad_failure for r in results.values()]
    reasons += [r.note for r in results.values()]
    reasons = [reason for reason in reasons if reason]
    return {
        "dtypes": {dtype: r.status for dtype, r in results.items()},
        "values": values,
        "grads": grads,
        "reason": reasons[0] if reasons else skipped_note(results),
    }


def skipped_note(results):
    skipped = sum((r.skipped for r in results.values()), collections.Counter())
    if not skipped:
        return ""
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(skipped.items()))
    return f"samples skipped: {kinds}"


# --- The walk, in child processes ------------------------------------------


def worker():
    """A child: says `ready` once torch is imported, then reads entry
    indices from stdin, one a line, and answers each with `begin <dtype>`
    lines and then `row <json>`. Anything else that writes to stdout
    (stride's C++ included) goes to stderr instead."""
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    load_torch()
    # One thread each: the children run side by side on the cores, and a
    # reduction's order (its last bits) does not depend on the core count.
    torch.set_num_threads(1)
    stride.set_num_threads(1)
    protocol.write("ready\n")
    for line in sys.stdin:
        row = run_entry(OP_DB[int(line)], on_dtype=lambda dtype: protocol.write(f"begin {dtype}\n"))
        protocol.write(f"row {json.dumps(row)}\n")


def crash_row(op, dtype, how):
    return {
        "name": op.full_name,
        "family": family_of(op.name),
        "stride": find_counterpart(op).name,
        "dtypes": {dtype: "fail"} if dtype else {},
        "values": "fail",
        "grads": "—",
        "reason": f"{how} while running {dtype}" if dtype else how,
    }


def walk(jobs):
    """Every entry's row: those stride lacks at once, the others in `jobs`
    child processes."""
    load_torch()
    rows = [run_entry(op) for op in OP_DB if find_counterpart(op) is None]
    have = [index for index, op in enumerate(OP_DB) if find_counterpart(op) is not None]
    return rows + run_in_children(
        have, jobs, lambda index, dtype, how: crash_row(OP_DB[index], dtype, how)
    )


# --- The report ------------------------------------------------------------


def generate(jobs=2):
    """docs/ops.md's text, from a fresh walk."""
    return report(walk(jobs), torch.__version__)


# --- Command line ----------------------------------------------------------


def print_failure(sample, outcome):
    print(f"  FAIL {sample.summary()}")
    print(f"       {outcome.values or outcome.grads}")
    if outcome.error is not None:  # the whole message, as the reason is its first line
        for line in str(outcome.error).splitlines()[:12]:
            print(f"       | {line}")


def run_only(name):
    """Runs the entries named `name` (with or without variant) in this
    process, printing each failing sample."""
    ops = [op for op in load_torch() if name in (op.name, op.full_name)]
    if not ops:
        sys.exit(f"No OpInfo entry is named {name}.")
    for op in ops:
        print(f"{op.full_name}:")
        row = run_entry(op, print_failure)
        print("\n".join(entry_table([row])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="PATH", help="write the report (docs/ops.md) there")
    parser.add_argument("--only", metavar="NAME", help="run one entry, printing its failures")
    parser.add_argument("--jobs", type=int, default=2, help="child processes (default 2)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker()
    elif options.only:
        run_only(options.only)
    elif options.write:
        Path(options.write).write_text(generate(options.jobs))
    else:
        print(generate(options.jobs), end="")


if __name__ == "__main__":
    main()
