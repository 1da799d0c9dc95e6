"""stride.cuda and Tensor.cuda(): torch.cuda's idioms. Without a GPU (every
machine these tests have run on so far) the queries say so and moving a
tensor there raises with the reason; with one, tensors go there and back."""

import pytest
import stride

needs_gpu = pytest.mark.skipif(
    not stride.cuda.is_available(), reason=f"no CUDA device: {stride.cuda.unavailable_reason()}"
)


def test_the_device_idiom_picks_the_cpu_without_a_gpu():
    device = "cuda" if stride.cuda.is_available() else "cpu"
    x = stride.ones(2, 3).to(device)
    assert x.device.type == device


def test_no_gpu_is_said_and_explained():
    if stride.cuda.is_available():
        assert stride.cuda.device_count() > 0
        assert stride.cuda.unavailable_reason() == ""
        return
    assert stride.cuda.device_count() == 0
    reason = stride.cuda.unavailable_reason()
    assert reason
    with pytest.raises(RuntimeError, match="cuda"):
        stride.ones(2).cuda()
    with pytest.raises(RuntimeError):
        stride.zeros(2, device="cuda")
    stride.cuda.synchronize()  # nothing to wait for
    assert stride.cuda.memory_allocated() == 0


@needs_gpu
def test_tensors_go_to_the_gpu_and_back():
    x = stride.arange(12, dtype=stride.float32).view(3, 4)
    g = x.cuda()
    assert g.device == stride.device("cuda:0")
    assert stride.allclose(g.cpu(), x)
    assert stride.allclose(g.t().cpu(), x.t())  # a strided GPU tensor
    assert stride.cuda.memory_allocated() > 0
    assert stride.cuda.max_memory_allocated() >= stride.cuda.memory_allocated()
