"""stride.doctor: checks that make silent training bugs loud.

Each of these bugs trains "fine" (the loss goes down, nothing raises) and
yet the model is wrong:

    stride.doctor.check_causality(model, vocab_size=65, length=16)
        a next-token model that reads future tokens (a leak);
    stride.doctor.audit_parameters(model, optimizer, loss_fn)
        a parameter no optimizer owns, that gets no gradient, or that a
        step does not change;
    stride.doctor.gradient_flow(model)
        how much gradient reaches each parameter;
    stride.doctor.check_logits(outputs)
        probabilities fed to a loss that expects logits;
    stride.doctor.find_nonfinite(model, fn)
        the first module whose output turns NaN or Inf.

`stride.doctor.check(model, ...)` runs every check its arguments allow and
returns one report. The checks are stride's C++ doctor's, run on the
Python model's own tensors.
"""

from ._stride import Tensor, _doctor

CausalityResult = _doctor.CausalityResult
AuditResult = _doctor.AuditResult
GradientFlow = _doctor.GradientFlow
check_logits = _doctor.check_logits


def _named_parameters(model, check):
    named_parameters = getattr(model, "named_parameters", None)
    if not callable(named_parameters):
        raise TypeError(
            f"{check}(): model must be a stride.nn.Module (anything with named_parameters()); "
            f"got {type(model).__name__}."
        )
    return list(named_parameters())


def check_causality(model, vocab_size, length, *, batch=2, trials=2, tolerance=0.0, seed=0):
    """Whether the output at position t depends only on tokens <= t.

    `model` maps ids (B, T) int64 to (B, T, ...): a module or any callable.
    For each cut t the tokens after t are replaced by other random tokens and
    the outputs at positions <= t must not change (the default generator is
    reset before every call, so dropout draws the same numbers in both runs;
    call model.eval() first). Returns a CausalityResult (truthy when causal)
    naming the first leaking position."""
    return _doctor.check_causality(model, vocab_size, length, batch, trials, tolerance, seed)


def audit_parameters(model, optimizer, loss_fn):
    """Takes ONE real optimizer step (zero_grad, loss_fn().backward(),
    step) and checks that every trainable parameter of `model` is owned by
    `optimizer`, received a non-zero gradient and changed. Returns an
    AuditResult (truthy when clean) listing each problem by parameter name."""
    impl = getattr(optimizer, "_impl", None)
    if impl is None:
        raise TypeError(f"{type(optimizer).__name__} is not a stride.optim optimizer.")
    return _doctor.audit_parameters(_named_parameters(model, "audit_parameters"), impl, loss_fn)


def gradient_flow(model, zero_tolerance=0.0):
    """Per trainable parameter: the fraction of near-zero gradient entries,
    |grad|, |grad| / |w|, and whether any signal arrived. Run a backward pass
    first. `.table()` prints it; the result is truthy when every trainable
    parameter got a signal."""
    return _doctor.gradient_flow(_named_parameters(model, "gradient_flow"), zero_tolerance)


class NonFiniteResult:
    """Where a forward pass first produced NaN or Inf: the dotted name of the
    module ("" for the root), or found=False."""

    def __init__(self, found, module, message):
        self.found = found
        self.module = module
        self.message = message

    def __bool__(self):
        return self.found

    def __repr__(self):
        return self.message


def _tensors(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _all_finite(value):
    # NaN compares false, so only finite entries are below infinity.
    for t in _tensors(value):
        if t.is_floating_point() and t.numel() > 0:
            finite = t.detach().abs() < float("inf")
            if finite.sum().item() != t.numel():
                return False
    return True


def find_nonfinite(model, fn):
    """Runs fn() (a forward pass, or forward and backward) with a forward
    hook on every module of `model`, and names the first module, in
    execution order, whose output holds a NaN or an Inf, and whether its
    input was still finite (as the C++ doctor does). The hooks are removed
    on return, also when fn raises. With stride.autograd.detect_anomaly()
    it also names the backward function of the first non-finite gradient."""
    found = []

    def hook_for(name):
        def hook(module, args, output):
            if found or _all_finite(output):
                return
            where = "the model" if not name else f'"{name}"'
            shapes = ", ".join(str(tuple(t.shape)) for t in _tensors(output))
            state = "finite" if _all_finite(args) else "already non-finite"
            found.append(
                NonFiniteResult(
                    True,
                    name,
                    f"the first NaN/Inf of the forward pass comes out of {where} "
                    f"({type(module).__name__}, output {shapes}) whose input was {state}",
                )
            )

        return hook

    handles = [m.register_forward_hook(hook_for(n)) for n, m in model.named_modules()]
    try:
        fn()
    finally:
        for handle in handles:
            handle.remove()
    return found[0] if found else NonFiniteResult(False, "", "no module produced a NaN or an Inf")


class Report:
    """What check() found: each check's result by name, and `ok`."""

    def __init__(self, results):
        self.results = results

    @property
    def ok(self):
        """True when every check passed."""
        return all(bool(r) for r in self.results.values())

    def __bool__(self):
        return self.ok

    def __getitem__(self, name):
        return self.results[name]

    def __repr__(self):
        lines = []
        for name, result in self.results.items():
            mark = "ok " if bool(result) else "BAD"
            text = result.table() if isinstance(result, GradientFlow) else result.message
            lines.append(f"[{mark}] {name}: {text}")
        return "\n".join(lines)


def check(model, *, optimizer=None, loss_fn=None, vocab_size=None, length=None):
    """Runs the doctor's checks on `model` that its arguments allow:

    * vocab_size and length: check_causality (in eval mode, restored after);
    * loss_fn: a backward pass and gradient_flow;
    * optimizer and loss_fn: audit_parameters, which takes ONE real
      optimizer step.

    Returns a Report (truthy when every check passed; print it for details).
    """
    results = {}
    if vocab_size is not None and length is not None:
        was_training = model.training
        model.eval()
        try:
            results["causality"] = check_causality(model, vocab_size, length)
        finally:
            model.train(was_training)
    if loss_fn is not None:
        if optimizer is not None:
            results["parameters"] = audit_parameters(model, optimizer, loss_fn)
        else:
            model.zero_grad()
            loss_fn().backward()
        results["gradient_flow"] = gradient_flow(model)
    if not results:
        raise ValueError(
            "check() needs vocab_size and length (causality), loss_fn (gradient "
            "flow) or loss_fn and optimizer (parameter audit)."
        )
    return Report(results)
