"""stride.models against transformers: tiny Llama, GPT-2 and BERT
checkpoints that transformers 4.57 and 5 saved (tests/golden/hf,
tools/gen_hf_goldens.py and gen_bert_goldens.py), and its logits, loss,
every layer's attention probabilities and hidden states, and greedy
generations on them; the module tree under transformers' names, hooks, state_dict, to().
Where build-venv has transformers and torch, the same models run live beside
stride too: hidden states and padded batches."""

import importlib.util
import shutil
from pathlib import Path

import pytest
import stride

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden" / "hf"
pytestmark = pytest.mark.skipif(not GOLDEN.is_dir(), reason="tests/golden/hf is not in this tree")

# (directory, goldens file, the model's prefix in it)
CHECKPOINTS = [
    ("llama_tiny_gqa", "llama_tiny_outputs", "gqa"),
    ("llama_tiny_tied", "llama_tiny_outputs", "tied"),
    ("llama5_tiny_default", "llama5_tiny_outputs", "default"),
    ("llama5_tiny_llama3", "llama5_tiny_outputs", "llama3"),
    ("llama5_tiny_linear", "llama5_tiny_outputs", "linear"),
    ("gpt2_tiny", "gpt2_tiny_outputs", "tied"),
    ("gpt2_tiny_untied", "gpt2_tiny_outputs", "untied"),
    ("gpt2_tiny_sharded", "gpt2_tiny_outputs", "tied"),
    ("gpt2_5_tiny", "gpt2_5_tiny_outputs", "tied"),
]


def max_error(a, b):
    """The largest difference, relative to b's largest magnitude when that
    is above 1 (logits of a few units carry float32 rounding of their size)."""
    b = b.double()
    return (a.double() - b).abs().max().item() / max(1.0, b.abs().max().item())


@pytest.mark.parametrize("directory,goldens,prefix", CHECKPOINTS)
def test_outputs_are_transformers(directory, goldens, prefix):
    want = stride.load(GOLDEN / f"{goldens}.safetensors")
    model = stride.models.from_pretrained(GOLDEN / directory)
    ids, labels = want["ids"], want["labels"]
    out = model(ids, labels=labels, output_attentions=True, output_hidden_states=True)
    assert max_error(out.logits, want[f"{prefix}/logits"]) < 1e-5
    assert abs(out.loss.item() - want[f"{prefix}/loss"].item()) < 1e-5
    layers = model.config.num_hidden_layers
    assert len(out.attentions) == layers and len(out.hidden_states) == layers + 1
    for layer, probabilities in enumerate(out.attentions):
        assert max_error(probabilities, want[f"{prefix}/attn.{layer}"]) < 1e-5, layer
    for i, hidden in enumerate(out.hidden_states):
        assert max_error(hidden, want[f"{prefix}/hidden.{i}"]) < 1e-5, i
    # The fused path (no probabilities asked for) gives the same logits.
    assert max_error(model(ids).logits, out.logits) < 1e-5
    greedy = model.generate(ids[:1, :8], max_new_tokens=64)
    assert greedy[0].tolist() == want[f"{prefix}/greedy"].tolist()


def test_the_module_tree_has_transformers_names():
    llama = stride.models.AutoModelForCausalLM.from_pretrained(GOLDEN / "llama_tiny_gqa")
    assert type(llama).__name__ == "LlamaForCausalLM"
    names = dict(llama.named_parameters())
    assert "model.layers.1.self_attn.q_proj.weight" in names and "lm_head.weight" in names
    assert set(llama.state_dict()) == set(stride.load(GOLDEN / "llama_tiny_gqa/model.safetensors"))
    assert type(llama.model.layers[1].self_attn).__name__ == "LlamaAttention"
    gpt2 = stride.models.from_pretrained(GOLDEN / "gpt2_tiny")
    assert gpt2.transformer.h[1].attn.c_attn.weight.shape == (32, 96)  # Conv1D: (in, out)
    assert gpt2.lm_head.weight is gpt2.transformer.wte.weight  # tied


def test_a_forward_hook_on_a_layer_sees_its_output():
    model = stride.models.from_pretrained(GOLDEN / "llama_tiny_gqa")
    seen = []
    handle = model.model.layers[1].register_forward_hook(
        lambda module, args, output: seen.append((type(module).__name__, output[0].shape))
    )
    ids = stride.tensor([[5, 6, 7, 8]])
    out = model(ids, output_hidden_states=True)
    handle.remove()
    model(ids)
    assert seen == [("LlamaDecoderLayer", (1, 4, 32))]
    assert out.hidden_states[0].shape == (1, 4, 32)


def test_weights_are_mapped_and_train():
    model = stride.models.from_pretrained(GOLDEN / "llama_tiny_gqa")
    model.train()
    ids = stride.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    optimizer = stride.optim.AdamW(model.parameters(), lr=1e-2)
    first = model(ids, labels=ids).loss
    for _ in range(5):
        optimizer.zero_grad()
        loss = model(ids, labels=ids).loss
        loss.backward()
        optimizer.step()
    assert model(ids, labels=ids).loss.item() < first.item()
    # The file itself is untouched: the mapped pages are copy-on-write.
    want = stride.load(GOLDEN / "llama_tiny_gqa/model.safetensors")
    assert max_error(model.lm_head.weight, want["lm_head.weight"]) > 0
    again = stride.models.from_pretrained(GOLDEN / "llama_tiny_gqa")
    assert max_error(again.lm_head.weight, want["lm_head.weight"]) == 0


def test_to_converts_every_weight():
    model = stride.models.from_pretrained(GOLDEN / "gpt2_tiny").to(stride.float64)
    assert {p.dtype for p in model.parameters()} == {stride.float64}
    ids = stride.tensor([[1, 2, 3]])
    assert model(ids).logits.dtype == stride.float64


def test_a_directory_without_a_model_says_what_it_needs(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        stride.models.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "t5"}')
    with pytest.raises(ValueError, match="'t5' model"):
        stride.models.from_pretrained(tmp_path)


@pytest.mark.parametrize("directory", ["llama_tiny_gqa", "gpt2_tiny"])
def test_logits_to_keep_computes_the_last_positions_only(directory):
    model = stride.models.from_pretrained(GOLDEN / directory)
    ids = stride.load(GOLDEN / "gpt2_tiny_outputs.safetensors")["ids"]
    full = model(ids).logits
    assert tuple(model(ids, logits_to_keep=1).logits.shape) == (ids.shape[0], 1, full.shape[-1])
    assert max_error(model(ids, logits_to_keep=3).logits, full[:, -3:]) < 1e-5
    picked = stride.tensor([0, 4])
    assert max_error(model(ids, logits_to_keep=picked).logits, full[:, [0, 4]]) < 1e-5


def test_generate_samples_within_top_k():
    model = stride.models.from_pretrained(GOLDEN / "gpt2_tiny")
    ids = stride.tensor([[1, 2, 3]])
    generator = stride.Generator().manual_seed(3)
    out = model.generate(ids, max_new_tokens=6, do_sample=True, top_k=1, generator=generator)
    assert out.tolist() == model.generate(ids, max_new_tokens=6).tolist()  # top_k 1 is greedy
    sampled = model.generate(ids, max_new_tokens=6, do_sample=True, temperature=2.0, top_p=0.9)
    assert sampled.shape == (1, 9) and sampled[0, :3].tolist() == [1, 2, 3]


@pytest.mark.parametrize("directory", ["llama_tiny_gqa", "gpt2_tiny"])
def test_left_padded_prompts_generate_what_each_prompt_generates_alone(directory):
    model = stride.models.from_pretrained(GOLDEN / directory)
    prompts = [[5, 17, 300, 42, 9, 77], [12, 500], [8, 8, 9]]
    width = max(len(p) for p in prompts)
    pad = 0
    ids = stride.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = stride.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    batch = model.generate(ids, attention_mask=mask, max_new_tokens=12)
    assert batch.shape == (3, width + 12)
    for row, prompt in enumerate(prompts):
        alone = model.generate(stride.tensor([prompt]), max_new_tokens=12)
        assert batch[row, width:].tolist() == alone[0, len(prompt) :].tolist(), row
    # The positions count from each row's first token: the same logits as
    # the row alone, to float rounding.
    positions = (mask.cumsum(dim=-1) - 1).masked_fill(mask == 0, 1)
    logits = model(ids, attention_mask=mask, position_ids=positions).logits
    for row, prompt in enumerate(prompts):
        alone = model(stride.tensor([prompt])).logits[0]
        assert max_error(logits[row, width - len(prompt) :], alone) < 1e-5, row
    with pytest.raises(ValueError, match="pad on the left"):
        model.generate(ids.flip(1), attention_mask=mask.flip(1), max_new_tokens=2)


@pytest.mark.parametrize("name", ["bert_tiny", "bert5_tiny"])
def test_bert_masked_lm_with_padding_and_token_types_is_transformers(name):
    want = stride.load(GOLDEN / f"{name}_outputs.safetensors")
    model = stride.models.AutoModelForMaskedLM.from_pretrained(GOLDEN / name)
    inputs = {k: want[k] for k in ("attention_mask", "token_type_ids", "labels")}
    out = model(want["ids"], **inputs, output_attentions=True, output_hidden_states=True)
    # Padded positions (row 1 from 12 on) are no one's output: left out.
    keep = [(0, slice(None)), (1, slice(0, 12))]
    for row, cols in keep:
        assert max_error(out.logits[row, cols], want["mlm/logits"][row, cols]) < 1e-5
        for i, hidden in enumerate(out.hidden_states):
            assert max_error(hidden[row, cols], want[f"mlm/hidden.{i}"][row, cols]) < 1e-5, i
        for layer, probabilities in enumerate(out.attentions):
            got, ref = probabilities[row, :, cols], want[f"mlm/attn.{layer}"][row, :, cols]
            assert max_error(got, ref) < 1e-5, layer
    assert abs(out.loss.item() - want["mlm/loss"].item()) < 1e-5
    assert len(out.hidden_states) == 3 and len(out.attentions) == 2
    # The fused attention (no probabilities asked for) gives the same logits.
    plain = model(
        want["ids"], attention_mask=want["attention_mask"], token_type_ids=want["token_type_ids"]
    )
    assert max_error(plain.logits[0], out.logits[0]) < 1e-5
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    assert "bert.encoder.layer.1.attention.self.query.weight" in dict(model.named_parameters())
    with pytest.raises(TypeError, match="encoder"):
        model.generate(want["ids"])


@pytest.mark.parametrize("name", ["bert_tiny", "bert5_tiny"])
def test_bert_model_pools_the_first_token(name):
    want = stride.load(GOLDEN / f"{name}_outputs.safetensors")
    model = stride.models.from_pretrained(GOLDEN / f"{name}_base")
    assert type(model).__name__ == "BertModel"
    out = model(
        want["ids"], attention_mask=want["attention_mask"], token_type_ids=want["token_type_ids"]
    )
    assert max_error(out.pooler_output, want["base/pooler_output"]) < 1e-5
    assert max_error(out.last_hidden_state[0], want["base/last_hidden_state"][0]) < 1e-5
    # A masked LM's checkpoint read as its base model: no pooler there.
    encoder = stride.models.BertModel.from_pretrained(GOLDEN / name)
    assert encoder.pooler is None
    assert encoder(want["ids"]).pooler_output is None
    with pytest.raises(ValueError, match="no causal language model"):
        stride.models.AutoModelForCausalLM.from_pretrained(GOLDEN / name)


def test_bert_reads_google_names_and_skips_the_pretraining_heads(tmp_path):
    """bert-base-uncased's own model.safetensors: LayerNorm gamma and beta,
    the pooler and BertForPreTraining's next-sentence head beside the
    masked-LM head."""
    weights = {}
    for name, tensor in stride.load(GOLDEN / "bert_tiny/model.safetensors").items():
        name = name.replace("LayerNorm.weight", "LayerNorm.gamma")
        weights[name.replace("LayerNorm.bias", "LayerNorm.beta")] = tensor
    weights["bert.pooler.dense.weight"] = stride.randn(32, 32)
    weights["bert.pooler.dense.bias"] = stride.zeros(32)
    weights["cls.seq_relationship.weight"] = stride.zeros(2, 32)
    weights["cls.seq_relationship.bias"] = stride.zeros(2)
    stride.save(weights, tmp_path / "model.safetensors")
    shutil.copy(GOLDEN / "bert_tiny/config.json", tmp_path)
    ids = stride.load(GOLDEN / "bert_tiny_outputs.safetensors")["ids"]
    model = stride.models.AutoModelForMaskedLM.from_pretrained(tmp_path)
    reference = stride.models.AutoModelForMaskedLM.from_pretrained(GOLDEN / "bert_tiny")
    assert stride.equal(model(ids).logits, reference(ids).logits)
    encoder = stride.models.BertModel.from_pretrained(tmp_path)
    assert encoder.pooler is not None
    assert stride.equal(encoder.pooler.dense.weight, weights["bert.pooler.dense.weight"])


LIVE = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))


@pytest.mark.skipif(not LIVE, reason="needs torch and transformers (tools/requirements-hf.txt)")
@pytest.mark.parametrize("directory", ["llama_tiny_gqa", "gpt2_tiny"])
def test_hidden_states_and_padded_batches_match_live_transformers(directory):
    import torch
    import transformers

    theirs = transformers.AutoModelForCausalLM.from_pretrained(
        GOLDEN / directory, attn_implementation="eager"
    ).eval()
    ours = stride.models.from_pretrained(GOLDEN / directory)
    ids = [[5, 9, 14, 2, 7, 7, 30, 1], [8, 3, 3, 11, 19, 4, 0, 0]]
    mask = [[1] * 8, [1] * 6 + [0, 0]]
    with torch.no_grad():
        want = theirs(
            torch.tensor(ids),
            attention_mask=torch.tensor(mask),
            output_hidden_states=True,
            output_attentions=True,
        )
    got = ours(
        stride.tensor(ids),
        attention_mask=stride.tensor(mask),
        output_hidden_states=True,
        output_attentions=True,
    )

    # Padded positions are left out: what they hold is no one's output.
    keep = [(0, slice(None)), (1, slice(0, 6))]
    for g, w in zip(got.hidden_states, want.hidden_states):
        for row, cols in keep:
            assert max_error(g[row, cols], stride.tensor(w[row, cols].numpy())) < 1e-5
    for g, w in zip(got.attentions, want.attentions):
        for row, cols in keep:
            assert (
                max_error(g[row, :, cols, cols], stride.tensor(w[row, :, cols, cols].numpy()))
                < 1e-5
            )
    for row, cols in keep:
        assert (
            max_error(got.logits[row, cols], stride.tensor(want.logits[row, cols].numpy())) < 1e-5
        )

    # Left-padded prompts, generated together: transformers' tokens.
    prompts = [[5, 17, 300, 42, 9, 77], [12, 500], [8, 8, 9]]
    ids = [[0] * (6 - len(p)) + p for p in prompts]
    mask = [[0] * (6 - len(p)) + [1] * len(p) for p in prompts]
    want = theirs.generate(
        torch.tensor(ids),
        attention_mask=torch.tensor(mask),
        max_new_tokens=12,
        do_sample=False,
        pad_token_id=0,
    )
    got = ours.generate(stride.tensor(ids), attention_mask=stride.tensor(mask), max_new_tokens=12)
    assert got.tolist() == want.tolist()
