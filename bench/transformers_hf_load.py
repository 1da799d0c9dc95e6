"""transformers' side of bench/compare_hf_load: from_pretrained of the
checkpoint hf_load_bench wrote, one decoded token, then the load time (and
with the first token's logits) and the process's peak RSS, in hf_load_bench's
format.

    python bench/transformers_hf_load.py DIR THREADS
"""

import resource
import sys
import time

import torch
from transformers import LlamaForCausalLM


def main() -> None:
    directory, threads = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(threads)
    start = time.perf_counter()
    model = LlamaForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    load = time.perf_counter() - start
    with torch.no_grad():
        logits = model(torch.ones(1, 1, dtype=torch.long)).logits
    ready = time.perf_counter() - start
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"load_s {load:.3f}\nready_s {ready:.3f}\nweights_bytes {weights}\npeak_rss_bytes {peak}")
    print(f"logit0 {logits.flatten()[0].item():.6f}")


if __name__ == "__main__":
    main()
