"""What the models return: transformers' output classes, by name and field.

`out.logits`, `out["logits"]` and `out[0]` (the fields that are set, in
order, as transformers' ModelOutput indexes them) all work, so code written
against transformers reads them unchanged.
"""


class ModelOutput:
    """A model's outputs by name; unset fields (None) are skipped by keys(),
    to_tuple() and integer indexing, as in transformers."""

    _fields = ()

    def __init__(self, **fields):
        unknown = set(fields) - set(self._fields)
        if unknown:
            raise TypeError(
                f"{type(self).__name__} has no field(s) {sorted(unknown)}; its fields are "
                f"{list(self._fields)}."
            )
        for name in self._fields:
            setattr(self, name, fields.get(name))

    def keys(self):
        return [name for name in self._fields if getattr(self, name) is not None]

    def to_tuple(self):
        return tuple(getattr(self, name) for name in self.keys())

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self.keys():
                raise KeyError(key)
            return getattr(self, key)
        return self.to_tuple()[key]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def __contains__(self, key):
        return key in self.keys()

    def __repr__(self):
        parts = []
        for name in self.keys():
            value = getattr(self, name)
            shape = getattr(value, "shape", None)
            if shape is not None:
                parts.append(f"{name}=Tensor{tuple(shape)}")
            elif isinstance(value, tuple):
                parts.append(f"{name}=({len(value)} items)")
            else:
                parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


class BaseModelOutputWithPast(ModelOutput):
    """A decoder's last hidden state, its KV cache, and on request every
    layer's hidden state and attention probabilities."""

    _fields = ("last_hidden_state", "past_key_values", "hidden_states", "attentions")


class CausalLMOutputWithPast(ModelOutput):
    """A causal language model's logits, its loss when given labels, its KV
    cache, and on request every layer's hidden state and attention
    probabilities."""

    _fields = ("loss", "logits", "past_key_values", "hidden_states", "attentions")
