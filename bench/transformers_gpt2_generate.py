"""GPT-2 124M (random weights) generating greedily with its KV cache, batch
1, in transformers: the PyTorch side of bench/compare_gpt2_generate. Prints
"tokens_per_s X" per run.

    python bench/transformers_gpt2_generate.py [NEW_TOKENS] [RUNS] [THREADS]
"""

import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    new_tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.set_num_threads(int(sys.argv[3]) if len(sys.argv) > 3 else torch.get_num_threads())
    torch.manual_seed(1)
    model = GPT2LMHeadModel(GPT2Config()).eval()  # GPT-2 small's shapes
    prompt = torch.tensor([[(i * 7919) % 50257 for i in range(16)]])
    mask = torch.ones_like(prompt)
    kwargs = dict(
        max_new_tokens=new_tokens,
        min_new_tokens=new_tokens,
        do_sample=False,
        use_cache=True,
        attention_mask=mask,
        pad_token_id=0,
    )
    with torch.no_grad():
        model.generate(prompt, **kwargs)  # warm-up
        for _ in range(runs):
            start = time.perf_counter()
            model.generate(prompt, **kwargs)
            print(f"tokens_per_s {new_tokens / (time.perf_counter() - start):.3f}", flush=True)


if __name__ == "__main__":
    main()
