"""stride.doctor on Python models: each check catches the bug it is for and
passes a correct model."""

import stride
import stride.nn.functional as F
from stride import nn


class TinyLM(nn.Module):
    def __init__(self, causal, vocab=11, d=8):
        super().__init__()
        self.causal = causal
        self.emb = nn.Embedding(vocab, d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.emb(ids)
        q, k, v = self.qkv(x).chunk(3, -1)
        return self.out(F.scaled_dot_product_attention(q, k, v, is_causal=self.causal))


def test_check_causality_finds_the_future_leak():
    leak = stride.doctor.check_causality(TinyLM(causal=False), vocab_size=11, length=6)
    assert not leak and leak.first_leaking_position == 0
    assert "NOT causal" in leak.message
    assert stride.doctor.check_causality(TinyLM(causal=True), vocab_size=11, length=6)


def test_audit_finds_an_optimizer_built_on_another_model():
    # The article's cosine experiment: the optimizer holds the old model.
    model, other = TinyLM(True), TinyLM(True)
    ids = stride.randint(0, 11, (2, 5))
    opt = stride.optim.Adam(other.parameters())

    def loss_fn():
        return F.cross_entropy(model(ids).view(-1, 11), ids.view(-1))

    audit = stride.doctor.audit_parameters(model, opt, loss_fn)
    assert not audit.ok
    assert any("emb.weight: not owned by the optimizer" in p for p in audit.problems)
    good = stride.doctor.audit_parameters(model, stride.optim.Adam(model.parameters()), loss_fn)
    assert good.ok, good.message


def test_gradient_flow_names_the_parameter_without_signal():
    model = TinyLM(True)
    model.out.bias.requires_grad_(True)
    ids = stride.randint(0, 11, (2, 5))
    (model(ids) * 0).sum().backward()  # no signal anywhere
    flow = stride.doctor.gradient_flow(model)
    assert not flow.ok
    assert [s.name for s in flow.params][:2] == ["emb.weight", "qkv.weight"]
    assert "NO SIGNAL" in flow.table()


def test_check_logits_flags_softmax_output():
    logits = stride.randn(4, 7)
    assert not stride.doctor.check_logits(logits).looks_like_probabilities
    assert stride.doctor.check_logits(F.softmax(logits, dim=-1)).looks_like_probabilities


def test_find_nonfinite_names_the_first_broken_module():
    class Breaks(nn.Module):
        def forward(self, x):
            return x.log()  # log of a negative number: NaN

    model = nn.Sequential(nn.Linear(3, 3), Breaks(), nn.Linear(3, 1))
    with stride.no_grad():
        model[0].weight.fill_(-1.0)
        model[0].bias.fill_(0.0)
    result = stride.doctor.find_nonfinite(model, lambda: model(stride.ones(2, 3)))
    assert result.found and result.module == "1"
    assert "whose input was finite" in result.message
    assert not model._forward_hooks and not model[1]._forward_hooks


def test_check_runs_every_check_its_arguments_allow():
    model = TinyLM(causal=False)
    ids = stride.randint(0, 11, (2, 5))
    report = stride.doctor.check(
        model,
        optimizer=stride.optim.Adam(model.parameters()),
        loss_fn=lambda: F.cross_entropy(model(ids).view(-1, 11), ids.view(-1)),
        vocab_size=11,
        length=5,
    )
    assert not report.ok
    assert not report["causality"] and report["parameters"].ok
    assert "[BAD] causality" in repr(report)
    assert model.training  # restored after the causality probe
