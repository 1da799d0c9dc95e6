"""docs/ops.md is current: the walk of PyTorch's OpInfo database
(opinfo.py) regenerated now gives the committed file, so an op added, fixed
or broken shows in the report in the same change. The one change allowed is
a CPU's: an entry whose values or gradients sit near the tolerance passes on
one CPU and differs on another, since stride's kernels and PyTorch's sum in
other orders there; such an entry (and the summary's counts it moves) is
reported as a warning."""

import difflib
import re
import types
import warnings
from pathlib import Path

import pytest

OPS_MD = Path(__file__).resolve().parents[2] / "docs" / "ops.md"
DIFF_LINES = 60
SUMMARY_ROW = re.compile(r"^\| [^|`]+ \|( \d+ \|)+$")


def entry_cells(line):
    """An entry's row as (entry, stride's name, dtypes without their marks,
    reason), or None for another line."""
    if not line.startswith("| `"):
        return None
    cells = [cell.strip() for cell in line.strip("|").split(" | ")]
    if len(cells) != 6:
        return None
    return cells[0], cells[1], re.sub(r" [✓✗]", "", cells[2]), cells[5]


def differs_by_values_only(committed, fresh):
    """Whether two versions of a line differ only where a CPU can move them:
    an entry's "values differ" verdicts (or their size), or a summary count."""
    if SUMMARY_ROW.match(committed) and SUMMARY_ROW.match(fresh):
        return committed.split("|")[1] == fresh.split("|")[1]
    old, new = entry_cells(committed), entry_cells(fresh)
    if old is None or new is None or old[:3] != new[:3]:
        return False
    return all(reason == "" or "values differ" in reason for reason in (old[3], new[3]))


def cpu_dependent_changes(committed, fresh):
    """The changed lines of fresh, when every change is one a CPU can make
    (differs_by_values_only) and no line was added or removed; else None."""
    old, new = committed.splitlines(), fresh.splitlines()
    if len(old) != len(new):
        return None
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    if not all(differs_by_values_only(a, b) for a, b in changed):
        return None
    return [b for _, b in changed]


def test_gradcheck_wrapper_calls_stride_on_stride_inputs():
    """cholesky_inverse's gradcheck wrapper calls torch.diag_embed: on a
    stride input it must call stride's (it raised "diag_embed(): argument
    'input' must be Tensor, not Tensor")."""
    pytest.importorskip("torch", reason="the OpInfo walk needs PyTorch (make venv-torch)")
    pytest.importorskip(
        "expecttest", reason="PyTorch's op database imports expecttest (make venv-torch)"
    )
    import opinfo
    import stride
    import torch

    entry = next(op for op in opinfo.load_torch() if op.name == "cholesky_inverse")
    factor = [[2.0, 0.0], [1.0, 3.0]]
    args = types.SimpleNamespace(input=stride.tensor(factor), args=(), kwargs={})
    actual = opinfo.forward(entry, stride.cholesky_inverse, args)
    torch_args = types.SimpleNamespace(input=torch.tensor(factor), args=(), kwargs={})
    expected = opinfo.forward(entry, torch.cholesky_inverse, torch_args)
    assert sum(actual.tolist(), []) == pytest.approx(sum(expected.tolist(), []))


def test_only_value_verdicts_may_move_between_cpus():
    committed = (
        "| all | 703 | 663 | 653 | 643 |\n"
        "| `svd` | `stride.svd` | f32 ✗, f64 ✗ | fail | pass | output 0: values differ: max abs "
        "diff 1.7. |\n"
        "| `sdpa` | `stride.sdpa` | f32 ✓, f64 ✓ | pass | pass |  |"
    )
    moved = committed.replace("643", "641").replace("f32 ✓", "f32 ✗")
    moved = moved.replace(
        "pass | pass |  |", "pass | fail | grad: values differ: max abs diff 6e-05. |"
    )
    assert cpu_dependent_changes(committed, moved) == moved.splitlines()[::2]
    # A new exception, a dtype gained or lost, an entry added: not a CPU's doing.
    raised = moved.replace("grad: values differ: max abs diff 6e-05.", "grad: TypeError: no")
    assert cpu_dependent_changes(committed, raised) is None
    assert cpu_dependent_changes(committed, committed.replace("f64 ✓", "f64 ✓, bf16 ✓")) is None
    assert (
        cpu_dependent_changes(committed, committed + "\n| `abs` | x | f32 ✓ | pass | n/a |  |")
        is None
    )
    assert cpu_dependent_changes(committed, committed.replace("| all |", "| linalg |")) is None


def test_ops_md_is_current_against_torch_opinfo():
    pytest.importorskip("torch", reason="the OpInfo walk needs PyTorch (make venv-torch)")
    pytest.importorskip(
        "expecttest", reason="PyTorch's op database imports expecttest (make venv-torch)"
    )
    import opinfo
    import opinfo_report

    fresh = opinfo.generate()
    committed = OPS_MD.read_text() if OPS_MD.exists() else ""
    moved = cpu_dependent_changes(committed, fresh)
    if moved:
        warnings.warn(
            "docs/ops.md: on this CPU these entries' values land on the other side of the "
            "tolerance (or differ by another amount):\n" + "\n".join(moved),
            stacklevel=1,
        )
    elif fresh != committed:
        diff = difflib.unified_diff(
            committed.splitlines(),
            fresh.splitlines(),
            "docs/ops.md (committed)",
            "docs/ops.md (regenerated)",
            lineterm="",
        )
        shown = "\n".join(list(diff)[:DIFF_LINES])
        pytest.fail(
            f"docs/ops.md is out of date. Regenerate it from the repository root with\n"
            f"    {opinfo_report.REGENERATE}\n(or make ops-doc). The difference:\n{shown}",
            pytrace=False,
        )
