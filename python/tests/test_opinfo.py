"""docs/ops.md is current: the walk of PyTorch's OpInfo database
(opinfo.py) regenerated now gives the committed file byte for byte, so an
op added, fixed or broken shows in the report in the same change."""

import difflib
import types
from pathlib import Path

import pytest

OPS_MD = Path(__file__).resolve().parents[2] / "docs" / "ops.md"
DIFF_LINES = 60


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


def test_ops_md_is_current_against_torch_opinfo():
    pytest.importorskip("torch", reason="the OpInfo walk needs PyTorch (make venv-torch)")
    pytest.importorskip(
        "expecttest", reason="PyTorch's op database imports expecttest (make venv-torch)"
    )
    import opinfo
    import opinfo_report

    fresh = opinfo.generate()
    committed = OPS_MD.read_text() if OPS_MD.exists() else ""
    if fresh != committed:
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
