"""PyTorch programs on stride: the program-level API (stride.compile,
stride.backends, stride.cuda's queries, the global switches, the generator
state) and `python -m stride.compat`, which runs a PyTorch script with its
`import torch` resolving to stride.

The programs of python/tests/programs/ run twice, as subprocesses: with
PyTorch and under stride.compat, from the same initial weights (the PyTorch
run writes them with torch.save, the stride run reads them with torch.load)
and the same batches (NumPy's and Python's generators); their losses must
agree step by step to a relative 1e-4. A program that needs a torch name
stride lacks is a strict xfail naming it, so that it fails once stride has it
and the mark can go.
"""

import importlib.util
import inspect
import os
import re
import subprocess
import sys

import pytest
import stride

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")
NANOGPT = os.path.join(PROGRAMS, "nanogpt")
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")
no_gpu = pytest.mark.skipif(stride.cuda.is_available(), reason="a CUDA device is present")


# ---- stride.compile -------------------------------------------------------


def test_compile_wraps_a_module_as_pytorch_does_and_runs_it_eagerly():
    model = stride.nn.Linear(3, 2)
    compiled = stride.compile(model)
    x = stride.randn(4, 3)
    assert stride.equal(compiled(x), model(x))
    assert compiled._orig_mod is model
    assert compiled.weight is model.weight  # attributes reach the module
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    compiled.eval()
    assert not model.training and not compiled.training
    compiled.note = "set through the wrapper"
    assert model.note == "set through the wrapper"


def test_compile_returns_a_function_itself_and_works_as_a_decorator():
    def double(x):
        return x * 2

    assert stride.compile(double) is double
    decorated = stride.compile(mode="max-autotune", fullgraph=True)(double)
    assert decorated is double
    with pytest.raises(TypeError, match="Module or a function"):
        stride.compile(3)


# ---- stride.backends, stride.cuda and the global switches -----------------


def test_tf32_switches_are_the_float32_matmul_precision_as_in_pytorch():
    try:
        stride.backends.cuda.matmul.allow_tf32 = True
        assert stride.get_float32_matmul_precision() == "high"
        stride.set_float32_matmul_precision("highest")
        assert stride.backends.cuda.matmul.allow_tf32 is False
        with pytest.warns(UserWarning, match="no effect"):
            stride.set_float32_matmul_precision("fastest")
        assert stride.get_float32_matmul_precision() == "highest"
    finally:
        stride.set_float32_matmul_precision("highest")
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf64"):
        stride.backends.cuda.matmul.allow_tf64 = True


def test_cudnn_switches_are_settable_and_readable():
    cudnn = stride.backends.cudnn
    saved = (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32)
    try:
        cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32 = True, True, False
        assert (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, True, False)
    finally:
        cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32 = saved
    assert cudnn.is_available() is False and cudnn.version() is None
    assert stride.backends.mps.is_available() is False
    assert stride.backends.mps.is_built() is False
    assert isinstance(stride.backends.cuda.is_built(), bool)


@no_gpu
def test_cuda_queries_answer_for_a_machine_without_a_gpu():
    assert stride.cuda.is_available() is False
    assert stride.cuda.device_count() == 0
    assert stride.cuda.is_bf16_supported() is False
    stride.cuda.manual_seed(0)
    stride.cuda.manual_seed_all(0)
    stride.cuda.synchronize()
    stride.cuda.empty_cache()
    reason = stride.cuda.unavailable_reason()
    for query in (stride.cuda.get_device_name, stride.cuda.current_device):
        with pytest.raises(RuntimeError, match=re.escape(reason)):  # as PyTorch's
            query()


def test_cpu_module_answers_as_torch_cpu():
    assert stride.cpu.is_available() and stride.cpu.device_count() == 1
    assert stride.cpu.current_device() == "cpu"
    stride.cpu.synchronize()


def test_deterministic_algorithms_are_recorded():
    try:
        stride.use_deterministic_algorithms(True, warn_only=True)
        assert stride.are_deterministic_algorithms_enabled()
        assert stride.is_deterministic_algorithms_warn_only_enabled()
    finally:
        stride.use_deterministic_algorithms(False)
    assert not stride.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError, match="mode must be a bool"):
        stride.use_deterministic_algorithms(1)


def test_thread_count_is_settable():
    threads = stride.get_num_threads()
    try:
        stride.set_num_threads(1)
        assert stride.get_num_threads() == 1
    finally:
        stride.set_num_threads(threads)


def test_rng_state_replays_the_default_generator(tmp_path):
    state = stride.get_rng_state()
    assert state.dtype == stride.uint8 and state.numel() == 16
    first = stride.randn(5)
    path = tmp_path / "rng.pt"
    stride.save({"rng": state}, path)  # as training checkpoints keep it
    stride.set_rng_state(stride.load(path)["rng"])
    assert stride.equal(stride.randn(5), first)
    assert stride.random.initial_seed() == stride.initial_seed() == 0  # conftest's seed


def test_rng_state_of_another_kind_is_refused_with_the_reason():
    with pytest.raises(RuntimeError, match="16 bytes"):
        stride.set_rng_state(stride.zeros(5056, dtype=stride.uint8))
    with pytest.raises(TypeError, match="uint8 tensor"):
        stride.set_rng_state([0] * 16)


# ---- python -m stride.compat ----------------------------------------------


def run(args, cwd, **kwargs):
    """Runs python with args in cwd, single-threaded (two processes share
    the machine), and returns the completed process."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, **kwargs
    )


def run_compat(script, *args, cwd):
    return run(["-m", "stride.compat", str(script), *args], cwd)


def check(result):
    """result's stdout; its stderr in the failure message if it failed."""
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def write_script(tmp_path, text, name="script.py"):
    path = tmp_path / name
    path.write_text(inspect.cleandoc(text) + "\n")
    return path


def test_every_import_form_of_torch_reaches_stride(tmp_path):
    script = write_script(
        tmp_path,
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.backends.cudnn as cudnn
        import torch.cuda.amp
        from torch import nn as nn2, optim
        from torch.cuda.amp import GradScaler
        from torch.utils.data import DataLoader
        import stride

        assert torch.Tensor is stride.Tensor and torch.float32 is stride.float32
        assert nn.Module is stride.nn.Module and nn is nn2 is torch.nn
        assert F.cross_entropy is stride.nn.functional.cross_entropy
        assert optim.AdamW is stride.optim.AdamW
        assert DataLoader is stride.utils.data.DataLoader
        assert GradScaler is stride.cuda.amp.GradScaler is torch.cuda.amp.GradScaler
        assert torch.amp.autocast is stride.amp.autocast
        assert hasattr(F, "scaled_dot_product_attention") and not hasattr(torch, "no_such")
        cudnn.benchmark = True  # a write reaches stride's module
        assert stride.backends.cudnn.benchmark is True
        print("ok", torch.__version__ == stride.__version__)
        """,
    )
    assert check(run_compat(script, cwd=tmp_path)).split() == ["ok", "True"]


def test_the_script_runs_as_python_would_run_it(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 7\n")
    script = write_script(
        tmp_path,
        """
        import os, sys
        from helper import VALUE  # beside the script: its directory is on the path
        print(__name__, sys.argv[1:], VALUE, sys.path[0] == os.path.dirname(__file__))
        sys.exit(3)
        """,
    )
    result = run_compat(script, "--lr=0.1", "x", cwd=ROOT)
    assert result.returncode == 3, result.stderr
    assert result.stdout.split() == ["__main__", "['--lr=0.1',", "'x']", "7", "True"]


def test_a_name_stride_lacks_is_named_as_the_torch_name(tmp_path):
    script = write_script(
        tmp_path,
        """
        import torch
        for use in ("torch.distributions.Normal", "torch.nn.NoSuchLayer"):
            try:
                eval(use)
            except AttributeError as error:
                print(error)
        try:
            import torch.no_such_module.sub
        except ModuleNotFoundError as error:
            print(error)
        """,
    )
    lines = check(run_compat(script, cwd=tmp_path)).splitlines()
    assert lines[0].startswith("torch.distributions is not in stride yet")
    assert lines[1].startswith("torch.nn.NoSuchLayer is not in stride yet")
    assert "torch.no_such_module is not in stride yet" in lines[2]


def test_usage_without_a_script_and_a_missing_script(tmp_path):
    result = run(["-m", "stride.compat"], tmp_path)
    assert result.returncode == 2 and "usage: python -m stride.compat SCRIPT" in result.stderr
    result = run(["-m", "stride.compat", "missing.py"], tmp_path)
    assert result.returncode == 2 and "missing.py" in result.stderr


def test_install_in_a_notebook_must_come_before_torch(tmp_path):
    result = run(
        [
            "-c",
            "import stride.compat; stride.compat.install(); import torch; print(torch.zeros(2))",
        ],
        tmp_path,
    )
    assert check(result).strip() == "tensor([0., 0.])"
    if HAS_TORCH:
        result = run(["-c", "import torch, stride.compat; stride.compat.install()"], tmp_path)
        assert "before the first `import torch`" in result.stderr


# ---- the programs -----------------------------------------------------------


def _formats_a_0d_tensor():
    try:
        format(stride.tensor(1.5), ".4f")
    except TypeError:
        return False
    return True


def _dataloader_takes(argument):
    return argument in inspect.signature(stride.utils.data.DataLoader).parameters


# What the programs use that stride may lack: the torch name, and whether
# stride has it now.
STRIDE_HAS = {
    "torch.Tensor.__format__ with a format spec (f'{loss:.4f}' of a 0-d tensor)": (
        _formats_a_0d_tensor
    ),
    "torch.topk": lambda: hasattr(stride, "topk"),
    "torch.multinomial": lambda: hasattr(stride, "multinomial"),
    "torch.outer": lambda: hasattr(stride, "outer"),
    "torch.Tensor.unbind": lambda: hasattr(stride.Tensor, "unbind"),
    "torch.Tensor.type(dtype)": lambda: hasattr(stride.Tensor, "type"),
    "torch.utils.data.DataLoader(pin_memory=)": lambda: _dataloader_takes("pin_memory"),
    "torch.amp.autocast in bfloat16 (the binding stride._stride._autocast.push/pop)": lambda: (
        hasattr(stride._stride, "_autocast")
    ),
}


def needs(*torch_names):
    """A strict xfail naming those of torch_names that stride lacks (no
    effect once it has them all)."""
    missing = [name for name in torch_names if not STRIDE_HAS[name]()]
    return pytest.mark.xfail(
        bool(missing), reason="stride lacks " + ", ".join(missing), strict=True
    )


FORMAT = "torch.Tensor.__format__ with a format spec (f'{loss:.4f}' of a 0-d tensor)"
AUTOCAST = "torch.amp.autocast in bfloat16 (the binding stride._stride._autocast.push/pop)"


def losses(output):
    """Every loss a program printed ("loss 3.51", "val loss 3.5125"), in order."""
    return [float(x) for x in re.findall(r"\bloss (-?\d+\.\d*(?:e[-+]?\d+)?)", output)]


def assert_losses_agree(torch_output, stride_output, rel=1e-4):
    expected, got = losses(torch_output), losses(stride_output)
    assert expected and len(got) == len(expected), (expected, got)
    worst = max(abs(g - e) / abs(e) for e, g in zip(expected, got))
    assert worst <= rel, f"losses differ by up to {worst:.2e} relative: {expected} vs {got}"


def torch_load(path):
    """path read by PyTorch as it reads untrusted checkpoints."""
    torch = pytest.importorskip("torch")
    return torch.load(path, weights_only=True)


def text_to_train_on():
    """TinyShakespeare's start where it is (STRIDE_DATA or ../shared/data),
    otherwise a generated text of the same alphabet."""
    for path in (
        os.environ.get("STRIDE_DATA", ""),
        os.path.join(ROOT, "..", "shared", "data", "tinyshakespeare.txt"),
    ):
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read(20000)
    words = ["to", "be", "or", "not", "that", "is", "the", "question", "KING", "HENRY:"]
    lines = (" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(9)) for i in range(400))
    return "\n".join(lines)


@pytest.fixture(scope="module")
def char_data(tmp_path_factory):
    """nanoGPT's prepared character data: train.bin, val.bin, meta.pkl."""
    directory = tmp_path_factory.mktemp("char_data")
    (directory / "input.txt").write_text(text_to_train_on(), encoding="utf-8")
    check(run([os.path.join(NANOGPT, "prepare.py"), "input.txt", "."], directory))
    return directory


class Runs:
    """A program run with PyTorch and under stride.compat in cwd, with args
    and each run's own; the stride run may have failed (stride_output says
    why)."""

    def __init__(self, script, cwd, args, torch_args=(), stride_args=()):
        self.cwd = cwd
        self.torch = check(run([script, *args, *torch_args], cwd))
        self.stride = run_compat(script, *args, *stride_args, cwd=cwd)

    def stride_output(self):
        return check(self.stride)


@pytest.fixture(scope="module")
def nanogpt(char_data, tmp_path_factory):
    """train.py under both, 50 steps; the stride run compiles the model, as
    nanoGPT does by default (stride.compile is eager)."""
    if not HAS_TORCH:
        pytest.skip("PyTorch is not installed")
    return Runs(
        os.path.join(NANOGPT, "train.py"),
        tmp_path_factory.mktemp("nanogpt"),
        [f"--dataset_dir={char_data}", "--init_weights=init.pt", "--max_iters=50"],
        torch_args=["--out_dir=torch"],
        stride_args=["--out_dir=stride", "--compile=True"],
    )


@needs(FORMAT)
def test_nanogpt_trains_as_under_pytorch(nanogpt):
    assert_losses_agree(nanogpt.torch, nanogpt.stride_output())


@needs(FORMAT)
def test_nanogpt_checkpoint_resumes_in_pytorch(nanogpt):
    torch = pytest.importorskip("torch")
    nanogpt.stride_output()
    checkpoint = torch_load(nanogpt.cwd / "stride" / "ckpt.pt")
    assert set(checkpoint) == {
        "model",
        "optimizer",
        "model_args",
        "iter_num",
        "best_val_loss",
        "config",
    }
    assert checkpoint["iter_num"] == 50 and checkpoint["config"]["compile"] is True
    # nanoGPT's resume: the compiled model's keys lose their prefix.
    state = {k.removeprefix("_orig_mod."): v for k, v in checkpoint["model"].items()}
    reference = torch_load(nanogpt.cwd / "torch" / "ckpt.pt")["model"]
    assert set(state) == set(reference)
    for name, tensor in reference.items():
        torch.testing.assert_close(state[name], tensor, rtol=1e-3, atol=1e-5, msg=name)
    model = load_program_module(os.path.join(NANOGPT, "model.py"), "nanogpt_model")
    gpt = model.GPT(model.GPTConfig(**checkpoint["model_args"]))
    gpt.load_state_dict(state)
    optimizer = gpt.configure_optimizers(0.1, 1e-3, (0.9, 0.99), "cpu")
    optimizer.load_state_dict(checkpoint["optimizer"])


def load_program_module(path, name):
    """A program's module imported here (with PyTorch, where torch is it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.dirname(path))
    return module


@needs(FORMAT, "torch.topk", "torch.multinomial")
def test_nanogpt_samples_greedily_as_under_pytorch(nanogpt, char_data):
    nanogpt.stride_output()
    args = [f"--dataset_dir={char_data}", "--out_dir=stride", "--top_k=1", "--max_new_tokens=40"]
    script = os.path.join(NANOGPT, "sample.py")
    # top_k=1 leaves multinomial one choice, so both libraries draw alike.
    expected = check(run([script, *args], nanogpt.cwd))
    assert check(run_compat(script, *args, cwd=nanogpt.cwd)) == expected


@needs(FORMAT, AUTOCAST)
def test_nanogpt_trains_in_bfloat16_close_to_pytorch(char_data, tmp_path):
    pytest.importorskip("torch")
    args = [
        f"--dataset_dir={char_data}",
        "--init_weights=init.pt",
        "--max_iters=10",
        "--dtype=bfloat16",
        "--eval_interval=100",
    ]
    runs = Runs(os.path.join(NANOGPT, "train.py"), tmp_path, args)
    # stride keeps the float32 result of a bfloat16 product (autocast.h).
    assert_losses_agree(runs.torch, runs.stride_output(), rel=1e-3)


@pytest.mark.parametrize(
    "arch",
    [
        pytest.param("mlp", marks=needs("torch.Tensor.type(dtype)")),
        pytest.param("cnn", marks=needs("torch.Tensor.type(dtype)")),
    ],
)
def test_classifier_trains_as_under_pytorch(arch, tmp_path):
    pytest.importorskip("torch")
    args = [f"--arch={arch}", "--init=init.pt", "--epochs=2"]
    runs = Runs(
        os.path.join(PROGRAMS, "classifier.py"),
        tmp_path,
        args,
        torch_args=["--out=torch.pth"],
        stride_args=["--out=stride.pth"],
    )
    assert_losses_agree(runs.torch, runs.stride_output())
    saved, reference = torch_load(tmp_path / "stride.pth"), torch_load(tmp_path / "torch.pth")
    assert list(saved) == list(reference)


@needs(FORMAT, "torch.Tensor.unbind", "torch.utils.data.DataLoader(pin_memory=)")
def test_llama2c_trains_as_under_pytorch(char_data, tmp_path):
    pytest.importorskip("torch")
    args = [f"--data_dir={char_data}", "--init=init.pt", "--max_iters=30"]
    runs = Runs(
        os.path.join(PROGRAMS, "llama2c.py"),
        tmp_path,
        args,
        torch_args=["--out_dir=torch"],
        stride_args=["--out_dir=stride"],
    )
    assert_losses_agree(runs.torch, runs.stride_output())
    checkpoint = torch_load(tmp_path / "stride" / "ckpt.pt")
    assert "freqs_cos" not in checkpoint["model"]  # a non-persistent buffer
    assert checkpoint["model"]["output.weight"].shape == (
        checkpoint["model_args"]["vocab_size"],
        checkpoint["model_args"]["dim"],
    )
