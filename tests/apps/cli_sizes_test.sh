#!/usr/bin/env bash
# Every command of the `stride` command line on models whose size fields are
# huge (2^31, 2^40 and 2^62): in a config file, in a run's checkpoint
# metadata and in a Hugging Face config.json. Each must finish in seconds
# with exit 0 (a command that only describes the model) or 2 and a sentence,
# never a crash, an unexpected error (std::bad_alloc reaching main, exit 3)
# or work in proportion to the size before refusing.
# Usage: cli_sizes_test.sh STRIDE SOURCE_DIR
set -euo pipefail
stride="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

for i in $(seq 200); do echo "the quick brown fox jumps over the lazy dog; so it goes."; done > corpus.txt
cat > tiny.json <<'JSON'
{"name": "tiny",
 "model": {"arch": "llama", "d_model": 32, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2,
           "context": 16, "multiple_of": 32},
 "train": {"steps": 2, "batch_size": 4, "eval_interval": 10, "eval_batches": 1,
           "checkpoint_interval": 10}}
JSON
"$stride" train --config tiny.json --data corpus.txt --out run --sample 0 > /dev/null

# edit FILE SECTION KEY VALUE OUT: a JSON config, a checkpoint's
# stride.config metadata or a Hugging Face config.json with one key set.
edit() {
  python3 - "$@" <<'PY'
import json
import struct
import sys

path, section, key, value, out = sys.argv[1:6]
if path.endswith(".safetensors"):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + n])
    config = json.loads(header["__metadata__"]["stride.config"])
    config[section][key] = int(value)
    header["__metadata__"]["stride.config"] = json.dumps(config)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(out, "wb").write(struct.pack("<Q", len(text)) + text + data[8 + n :])
else:
    config = json.load(open(path))
    (config[section] if section != "-" else config)[key] = int(value)
    json.dump(config, open(out, "w"))
PY
}

failures=0
runs=0
# check WHAT ARGS...: runs one command and judges how it ended.
check() {
  local what="$1"
  shift
  runs=$((runs + 1))
  local rc=0
  timeout 60 "$stride" "$@" > out.txt 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] || grep -q "unexpected error\|bad_alloc" out.txt; then
    echo "FAIL ($what): stride $* exited $rc: $(tail -c 300 out.txt)"
    failures=$((failures + 1))
  fi
}

hf="$src/tests/golden/hf/llama_tiny_gqa"
for size in 2147483648 1099511627776 4611686018427387904; do
  for field in model.vocab_size model.d_model model.n_layers model.n_heads model.n_kv_heads \
      model.context model.ffn_hidden model.multiple_of train.batch_size; do
    section="${field%%.*}" key="${field#*.}" what="$field=$size"
    edit tiny.json "$section" "$key" "$size" big.json
    check "$what" inspect --config big.json
    check "$what" init --config big.json --out init.safetensors
    check "$what" train --config big.json --data corpus.txt --out new --force --sample 0
    check "$what" doctor --config big.json --data corpus.txt
    rm -rf big && cp -r run big
    edit run/checkpoint.safetensors "$section" "$key" "$size" big/checkpoint.safetensors
    check "$what" generate --ckpt big --prompt "the " --tokens 4
    check "$what" eval --ckpt big --data corpus.txt
    check "$what" attention --ckpt big --prompt "the" --out attn.png
    check "$what" export --ckpt big --out export.safetensors
    check "$what" doctor --ckpt big --data corpus.txt
    check "$what" train --resume big --steps 3 --data corpus.txt --sample 0
  done
  for key in vocab_size hidden_size intermediate_size num_hidden_layers num_attention_heads \
      num_key_value_heads max_position_embeddings; do
    what="config.json $key=$size"
    rm -rf hf && cp -r "$hf" hf
    edit "$hf/config.json" - "$key" "$size" hf/config.json
    check "$what" generate --hf hf --prompt "the " --tokens 4
    check "$what" eval --hf hf --data corpus.txt --max-windows 2
  done
done
# The other model families hold context-sized tensors of their own (GPT-2's
# learned positions, the article's RoPE tables).
for arch in gpt2 article_llama rope_masked; do
  edit tiny.json model arch 0 arch.json
  sed -i "s/\"arch\": 0/\"arch\": \"$arch\"/; s/\"n_kv_heads\": 2/\"n_kv_heads\": 0/" arch.json
  for size in 2147483648 1099511627776 4611686018427387904; do
    what="$arch model.context=$size"
    edit arch.json model context "$size" big.json
    check "$what" inspect --config big.json
    check "$what" init --config big.json --out init.safetensors
    check "$what" train --config big.json --data corpus.txt --out new --force --sample 0
    check "$what" doctor --config big.json --data corpus.txt
  done
done
echo "$runs runs, $failures failed"
[ "$failures" -eq 0 ]
