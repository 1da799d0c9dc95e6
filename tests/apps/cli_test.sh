#!/usr/bin/env bash
# End-to-end test of the `stride` command line on a small corpus it writes
# itself: every command runs, outputs land where documented, and user errors
# give one line (no stack dump) and exit code 2.
set -euo pipefail
stride="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

for i in $(seq 300); do echo "the quick brown fox jumps over the lazy dog; so it goes."; done > corpus.txt
cat > tiny.json <<'JSON'
{"name": "tiny",
 "model": {"arch": "llama", "d_model": 32, "n_layers": 2, "n_heads": 4, "context": 16},
 "train": {"steps": 30, "batch_size": 8, "optimizer": "adamw", "lr": 3e-3, "schedule": "cosine",
           "warmup_steps": 3, "eval_interval": 10, "eval_batches": 2, "checkpoint_interval": 10}}
JSON

fail() { echo "FAIL: $*"; exit 1; }

"$stride" train --config tiny.json --data corpus.txt --out run --sample 20 --profile 3 > train.log
grep -q "val loss over the whole split" train.log || fail "train printed no final val loss"
for f in config.json tokenizer.json checkpoint.safetensors metrics.jsonl loss.svg trace.json; do
  [ -s "run/$f" ] || fail "train did not write run/$f"
done
grep -q '"val_loss"' run/metrics.jsonl || fail "metrics.jsonl has no val_loss"
[ "$(grep -c "<polyline" run/loss.svg)" -eq 3 ] || fail "loss.svg lacks the per-step and eval curves"
grep -q "Self CPU" train.log || grep -q "self" train.log || fail "no profile table"

"$stride" train --resume run --steps 40 --data corpus.txt --sample 0 > resume.log
grep -q "step 30:" resume.log || fail "resume did not start at step 30"
[ "$(grep -c '"step":40' run/metrics.jsonl)" -ge 1 ] || fail "resume did not reach step 40"

"$stride" eval --ckpt run --data corpus.txt > eval.log
grep -q "whole split" eval.log || fail "eval"
grep -q "bits per character, perplexity" eval.log || fail "eval gave no bits per character"
grep -q "last position of each window" eval.log || fail "eval gave no last-position loss"
"$stride" eval --ckpt run --data corpus.txt --split train | grep -q "on the train split" ||
  fail "eval --split train"
"$stride" generate --ckpt run --prompt "the " --tokens 20 --seed 1 > g1.txt
"$stride" generate --ckpt run --prompt "the " --tokens 20 --seed 1 > g2.txt
cmp -s g1.txt g2.txt || fail "generate is not reproducible with a seed"
# Past the context (16): a window sliding by one gives the same text as by a
# quarter only by chance, but each is reproducible; temperature 0 says it is greedy.
"$stride" generate --ckpt run --prompt "the " --tokens 40 --seed 1 --window 1 > w1.txt
"$stride" generate --ckpt run --prompt "the " --tokens 40 --seed 1 --window 1 > w1b.txt
cmp -s w1.txt w1b.txt || fail "generate --window 1 is not reproducible"
"$stride" generate --ckpt run --prompt "the " --tokens 10 --temperature 0 2> greedy.err > /dev/null
grep -q "greedy" greedy.err || fail "temperature 0 did not say it is greedy"
"$stride" generate --ckpt run --prompt "the " --tokens 20 --seed 1 --precision bf16 > g3.txt
[ "$(head -c 4 g3.txt)" = "the " ] || fail "generate --precision bf16 did not continue the prompt"
"$stride" train --config tiny.json --data corpus.txt --out run_bf16 --steps 5 --sample 0 \
  --precision bf16 > bf16.log
grep -q '"precision": "bf16"' run_bf16/config.json || fail "train --precision bf16 not recorded"
"$stride" attention --ckpt run --prompt "the quick" --out attn.png > /dev/null
[ "$(head -c 4 attn.png | tail -c 3)" = "PNG" ] || fail "attention wrote no PNG"
"$stride" attention --ckpt run --prompt "the quick" --out attn.svg > /dev/null
grep -q ">layer 1, head 3</text>" attn.svg || fail "attention.svg has no map titles"
grep -q ">q</text>" attn.svg || fail "attention.svg has no prompt characters on its axes"
"$stride" doctor --ckpt run --data corpus.txt > doctor.log || fail "doctor flags the correct Llama: $(cat doctor.log)"
grep -q "PASS  causality" doctor.log || fail "doctor causality"
# The article's leaky stage fails the doctor (exit 1).
if "$stride" doctor --config "$src/configs/ladder/04_rope_nomask.json" --data corpus.txt > leak.log; then
  fail "doctor passed the no-mask stage"
fi
grep -q "FAIL  causality" leak.log || fail "doctor did not name the causality failure"
if "$stride" doctor --config "$src/configs/ladder/01_simple_broken.json" --data corpus.txt > broken.log; then
  fail "doctor passed SimpleBrokenModel"
fi
grep -q "FAIL  logits into cross_entropy" broken.log || fail "doctor missed probabilities into CE"

# The ladder: parameter table, and a tiny run of two stages.
"$stride" ladder --params | grep -q "2370246 *2370246" || fail "ladder --params"

# inspect: a 7B Llama sized on meta, instantly and without its 25 GiB.
"$stride" inspect --config "$src/configs/llama-7b.json" > inspect.log
grep -q "^llama-7b (llama): 6,738,415,616 parameters" inspect.log || fail "inspect's 7B count"
grep -q "layers.31.feed_forward.w2.weight *(4096, 11008)" inspect.log || fail "inspect's shapes"
grep -q "optimizer state *50.21 GiB" inspect.log || fail "inspect's optimizer state"
"$stride" ladder --stages 1,3 --steps-scale 0.005 --data corpus.txt --out ladder > ladder.log
grep -q "SimpleModel_RMS .* NOT causal" ladder.log || fail "ladder did not flag SimpleModel_RMS"
[ -s ladder/ladder.md ] && [ -s ladder/ladder.json ] || fail "ladder wrote no table"

# The lesson's tiny GPT, shrunk to train in seconds, on TinyShakespeare when
# the run has it: its loss falls, every command takes it, the doctor passes.
cat > gpt.json <<'JSON'
{"name": "gpt-test",
 "model": {"arch": "gpt2", "d_model": 48, "n_layers": 2, "n_heads": 4, "context": 32,
           "tie_embeddings": true, "dropout": 0.0},
 "train": {"steps": 300, "batch_size": 16, "optimizer": "adamw", "lr": 3e-3,
           "eval_interval": 100, "eval_batches": 4, "checkpoint_interval": 100}}
JSON
gpt_data="${STRIDE_DATA:-corpus.txt}"
"$stride" train --config gpt.json --data "$gpt_data" --out gpt --sample 20 > gpt.log
first="$(grep -o '^step 0: train loss [0-9.]*' gpt.log | grep -o '[0-9.]*$')"
last="$(grep -o '"train_loss_estimate":[0-9.]*' gpt/metrics.jsonl | tail -1 | cut -d: -f2)"
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.5) }' ||
  fail "the tiny GPT's loss did not fall (step 0: $first, last: $last)"
"$stride" eval --ckpt gpt --data "$gpt_data" | grep -q "whole split" || fail "eval of the GPT"
"$stride" generate --ckpt gpt --prompt "ROMEO:" --tokens 20 --seed 1 > /dev/null || fail "generate GPT"
"$stride" attention --ckpt gpt --prompt "the quick" --out gpt_attn.png > /dev/null ||
  fail "attention of the GPT"
"$stride" doctor --ckpt gpt --data "$gpt_data" > gpt_doctor.log || fail "doctor flags the GPT: $(cat gpt_doctor.log)"
grep -q "PASS  causality" gpt_doctor.log || fail "doctor causality of the GPT"
# Hugging Face's layout out (GPT-2 and Llama runs), and Hugging Face
# directories in, with a tokenizer.json or a SentencePiece tokenizer.model.
"$stride" export --ckpt gpt --hf gpt_hf > /dev/null || fail "export --hf"
[ -s gpt_hf/config.json ] && [ -s gpt_hf/model.safetensors ] || fail "export --hf wrote no model"
"$stride" export --ckpt run --hf llama_hf > /dev/null || fail "export --hf of a Llama run"
grep -q '"LlamaForCausalLM"' llama_hf/config.json || fail "the Llama export is no LlamaForCausalLM"
mkdir llama_sp && cp "$src/tests/golden/hf/llama_tiny_gqa/config.json" \
  "$src/tests/golden/hf/llama_tiny_gqa/model.safetensors" llama_sp/ &&
  cp "$src/tests/golden/tokenizers/llama2_style.model" llama_sp/tokenizer.model
"$stride" generate --hf llama_sp --prompt "ROMEO: What say" --tokens 8 --temperature 0 \
  2> /dev/null > sp_gen.txt || fail "generate --hf with a SentencePiece tokenizer"
[ "$(head -c 15 sp_gen.txt)" = "ROMEO: What say" ] || fail "generate --hf (SentencePiece) did not continue the prompt"
"$stride" attention --hf llama_sp --prompt "ROMEO: What say" --out sp_attn.png > sp_attn.txt ||
  fail "attention --hf"
[ -s sp_attn.png ] && grep -q "2 layers (rows) x 4 heads" sp_attn.txt ||
  fail "attention --hf drew no maps of the model's layers and heads: $(cat sp_attn.txt)"
"$stride" eval --hf llama_sp --data corpus.txt --context 32 --max-windows 4 > sp_eval.txt ||
  fail "eval --hf"
grep -q "bits per byte" sp_eval.txt || fail "eval --hf printed no loss: $(cat sp_eval.txt)"
# Fine-tuning a Hugging Face model: its tokens, a run directory that
# resumes, evaluates, generates and exports back with its tokenizer.
"$stride" train --hf llama_sp --data corpus.txt --out sp_run --steps 6 --sample 0 \
  --set train.batch_size=4 --set train.eval_interval=3 --set train.eval_batches=1 > sp_train.log ||
  fail "train --hf: $(tail -5 sp_train.log)"
[ -s sp_run/tokenizer.model ] || fail "train --hf left the tokenizer out of the run"
"$stride" train --resume sp_run --data corpus.txt --steps 8 --sample 0 > sp_resume.log ||
  fail "resume of a train --hf run"
grep -q "resuming sp_run at step 6" sp_resume.log || fail "train --hf run resumed elsewhere"
"$stride" eval --ckpt sp_run --data corpus.txt | grep -q "bits per token" || fail "eval of a train --hf run"
"$stride" export --ckpt sp_run --hf sp_export > /dev/null || fail "export of a train --hf run"
[ -s sp_export/tokenizer.model ] || fail "export --hf of a train --hf run left its tokenizer"
"$stride" generate --ckpt sp_run --prompt "the quick" --tokens 5 --temperature 0 2> /dev/null \
  > sp_run_gen.txt || fail "generate from a train --hf run"
"$stride" generate --hf sp_export --prompt "the quick" --tokens 5 --temperature 0 \
  > sp_export_gen.txt || fail "generate from its export"
cmp -s sp_run_gen.txt sp_export_gen.txt || fail "the run and its export generate differently"
"$stride" generate --hf "$src/tests/golden/hf/gpt2_tiny" --prompt "ROMEO: What" --tokens 8 \
  --temperature 0 2> /dev/null > hf_gen.txt || fail "generate --hf"
[ "$(head -c 11 hf_gen.txt)" = "ROMEO: What" ] || fail "generate --hf did not continue the prompt"
if "$stride" generate --hf gpt_hf --prompt "x" 2> hf_err.txt; then fail "generate --hf without a tokenizer"; fi
grep -q "gpt_hf: no tokenizer.model (SentencePiece), tokenizer.json" hf_err.txt ||
  fail "no clear error for a missing tokenizer"
# BERT, an encoder: eval reports its masked-token loss, attention draws its
# maps over [CLS] ... [SEP], and generate and train refuse it with a
# sentence (exit 2).
mkdir bert && cp "$src/tests/golden/hf/bert_tiny/config.json" \
  "$src/tests/golden/hf/bert_tiny/model.safetensors" bert/ &&
  cp "$src/tests/golden/tokenizers/bert_uncased.json" bert/tokenizer.json
"$stride" eval --hf bert --data corpus.txt --max-windows 3 --context 32 --weights-dtype bf16 \
  2> /dev/null > bert_eval.txt || fail "eval --hf on BERT: $(cat bert_eval.txt)"
grep -q "masked-token loss over its first 3 windows of 32 positions, 15% of each window" \
  bert_eval.txt || fail "eval --hf on BERT printed no masked-token loss: $(cat bert_eval.txt)"
grep -q "with bf16 weights: .* per masked token" bert_eval.txt ||
  fail "eval --hf on BERT printed no bf16 loss: $(cat bert_eval.txt)"
"$stride" attention --hf bert --prompt "the quick brown fox" --out bert_attn.png > bert_attn.txt ||
  fail "attention --hf on BERT"
# The golden vocabulary cuts the words into 7 pieces.
[ -s bert_attn.png ] && grep -q "2 layers (rows) x 4 heads (columns), each 9 x 9" bert_attn.txt &&
  grep -q 'for "\[CLS\] the quick brown fox \[SEP\]"' bert_attn.txt ||
  fail "attention --hf on BERT drew no maps over [CLS] the quick brown fox [SEP]: $(cat bert_attn.txt)"
for command in "generate --hf bert --prompt x" "train --hf bert --data corpus.txt --out bert_run"; do
  set +e
  # shellcheck disable=SC2086
  "$stride" $command > /dev/null 2> bert_err.txt
  status=$?
  set -e
  [ "$status" -eq 2 ] || fail "$command exited $status, not 2"
  grep -q "arch bert is an encoder (a masked language model)" bert_err.txt ||
    fail "no clear error for $command: $(cat bert_err.txt)"
done

# Weight formats: an export with packed linear weights generates what the
# run does with the same format, and eval prints both formats' losses.
for dtype in bf16 int8 int4; do
  "$stride" export --ckpt run --out "w_$dtype.safetensors" --weights-dtype "$dtype" > /dev/null ||
    fail "export --weights-dtype $dtype"
  "$stride" generate --weights "w_$dtype.safetensors" --prompt "the " --tokens 20 --temperature 0 \
    2> /dev/null > "packed_file_$dtype.txt" || fail "generate --weights of an $dtype export"
  "$stride" generate --ckpt run --weights-dtype "$dtype" --prompt "the " --tokens 20 \
    --temperature 0 2> /dev/null > "packed_run_$dtype.txt" || fail "generate --weights-dtype $dtype"
  cmp -s "packed_file_$dtype.txt" "packed_run_$dtype.txt" ||
    fail "the $dtype export and the run packed as $dtype generate differently"
done
[ "$(stat -c %s w_int4.safetensors)" -lt "$(stat -c %s w_int8.safetensors)" ] ||
  fail "int4 weights are not smaller than int8 ones"
"$stride" eval --hf "$src/tests/golden/hf/llama_tiny_gqa" --max-windows 2 --context 32 \
  --weights-dtype int8 2> /dev/null > packed_eval.txt || fail "eval --weights-dtype"
grep -q "with int8 weights: .* bits per byte" packed_eval.txt || fail "eval printed no int8 loss"

# GGUF: a llama.cpp file generates with its own tokenizer, and reports its
# decoding speed as JSON.
"$stride" generate --gguf "$src/tests/golden/gguf/tiny_q4_0.gguf" --prompt "ROMEO:" --tokens 8 \
  --temperature 0 --stats-json gguf_stats.json 2> /dev/null > gguf_gen.txt || fail "generate --gguf"
[ "$(head -c 6 gguf_gen.txt)" = "ROMEO:" ] || fail "generate --gguf did not continue the prompt"
grep -q '"decode_tokens_per_s"' gguf_stats.json || fail "generate --stats-json wrote no speed"
"$stride" eval --gguf "$src/tests/golden/gguf/tiny_q8_0.gguf" --max-windows 2 --context 32 \
  2> /dev/null | grep -q "bits per byte" || fail "eval --gguf"
if "$stride" generate --gguf "$src/tests/golden/hf/llama_tiny_gqa/config.json" 2> gguf_err.txt; then
  fail "generate --gguf of a file that is not GGUF"
fi
grep -q "magic" gguf_err.txt || fail "no clear error for a file that is not GGUF"

# Ctrl-C: the run stops, saves a final checkpoint and says how to resume.
"$stride" train --config tiny.json --data corpus.txt --out interrupted --steps 1000000 --sample 0 > int.log &
pid=$!
for _ in $(seq 100); do grep -q "step 0:" int.log 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" -eq 130 ] || fail "interrupted train exited $rc, expected 130"
[ -s interrupted/checkpoint.safetensors ] || fail "no checkpoint after Ctrl-C"
grep -q "resume" int.log || fail "no resume hint after Ctrl-C"

# SIGTERM (timeout, Slurm, Kubernetes) and SIGHUP (a closed terminal) stop a
# run like Ctrl-C, at a random step; resumed (to its end, or to the same
# --steps given again), its metrics equal an uninterrupted run's line for
# line, timings aside, and its checkpoint records the same config.
"$stride" train --config tiny.json --data corpus.txt --out straight --steps 2000 --sample 0 > straight.log
untimed() { sed -E 's/"(elapsed|tokens_per_s)":[^,}]*,?//g' "$1"; }
untimed straight/metrics.jsonl > straight.metrics
saved_config() {
  python3 -c 'import json, struct, sys
f = open(sys.argv[1], "rb")
n = struct.unpack("<Q", f.read(8))[0]
print(json.loads(f.read(n))["__metadata__"]["stride.config"])' "$1/checkpoint.safetensors"
}
declare -A resume_steps=([TERM]="" [HUP]="--steps 2000")
for sig in TERM HUP; do
  "$stride" train --config tiny.json --data corpus.txt --out "stopped_$sig" --steps 2000 \
    --sample 0 > "stopped_$sig.log" &
  pid=$!
  for _ in $(seq 100); do grep -q "step 0:" "stopped_$sig.log" 2>/dev/null && break; sleep 0.1; done
  sleep "0.$((RANDOM % 5 + 1))"
  kill "-$sig" "$pid"
  set +e
  wait "$pid"
  rc=$?
  set -e
  expected=$((128 + $(kill -l "$sig")))
  [ "$rc" -eq "$expected" ] || fail "a run sent SIG$sig exited $rc, expected $expected"
  grep -q "stopped by SIG$sig" "stopped_$sig.log" || fail "no word of SIG$sig"
  # shellcheck disable=SC2086
  "$stride" train --resume "stopped_$sig" ${resume_steps[$sig]} --data corpus.txt --sample 0 \
    > "resumed_$sig.log"
  grep -q "^resuming stopped_$sig at step" "resumed_$sig.log" || fail "resume did not say where it starts"
  untimed "stopped_$sig/metrics.jsonl" > stopped.metrics
  cmp -s straight.metrics stopped.metrics ||
    fail "metrics resumed after SIG$sig differ: $(diff straight.metrics stopped.metrics | head -5)"
  [ "$(saved_config straight)" = "$(saved_config "stopped_$sig")" ] ||
    fail "the checkpoint resumed after SIG$sig records another config than the uninterrupted one"
done

# OMP_NUM_THREADS is honoured when neither --threads nor STRIDE_NUM_THREADS is given.
env -u STRIDE_NUM_THREADS OMP_NUM_THREADS=1 "$stride" train --config tiny.json --data corpus.txt \
  --out omp --steps 2 --sample 0 > omp.log
grep -q ", 1 threads," omp.log || fail "OMP_NUM_THREADS=1 was ignored: $(grep threads omp.log)"

# User errors: one line on stderr, exit code 2.
expect_error() {
  local pattern="$1"; shift
  set +e
  "$@" > out.txt 2> err.txt
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc, expected 2"
  [ "$(wc -l < err.txt)" -eq 1 ] || fail "'$*' printed more than one line: $(cat err.txt)"
  grep -q "$pattern" err.txt || fail "'$*' said: $(cat err.txt)"
}
# Text is UTF-8: a corpus of multi-byte characters trains and generates
# valid UTF-8; bytes that are not UTF-8 are refused with their offset.
for i in $(seq 300); do echo "café — naïve façade, ünïcödé ok…"; done > utf8.txt
"$stride" train --config tiny.json --data utf8.txt --out utf8_run --steps 3 --sample 0 > utf8.log
"$stride" generate --ckpt utf8_run --prompt "café" --tokens 40 --seed 1 > utf8_gen.txt
iconv -f UTF-8 -t UTF-8 utf8_gen.txt > /dev/null || fail "generate wrote invalid UTF-8"
printf 'abc\xff\n' > latin1.txt
expect_error "not valid UTF-8: byte 0xff at offset 3" \
  "$stride" train --config tiny.json --data latin1.txt --out latin1_run

expect_error "Hint" "$stride" train --config tiny.json --data missing.txt --out run2
# --out must be able to become a directory.
touch a_file
expect_error "a_file is a file, not a directory" \
  "$stride" train --config tiny.json --data corpus.txt --out a_file --steps 1
expect_error "a_file is a file, not a directory" \
  "$stride" train --config tiny.json --data corpus.txt --out a_file/run --steps 1
expect_error "cannot create the directory" \
  "$stride" train --config tiny.json --data corpus.txt --out /proc/stride_run --steps 1
expect_error "cannot read config" "$stride" train --config nope.json
echo '{"model": {"d_modle": 3}}' > typo.json
expect_error 'unknown key "d_modle"' "$stride" train --config typo.json --data corpus.txt
expect_error "not in the model's vocabulary" "$stride" generate --ckpt run --prompt "XYZ"
expect_error "no trained run" "$stride" generate --ckpt nowhere
"$stride" train --config tiny.json --data corpus.txt --out set_run --steps 2 --sample 0 \
  --set train.lr=0.002 --set model.d_model=48 > set.log
grep -q '"lr": 0.002' set_run/config.json && grep -q '"d_model": 48' set_run/config.json ||
  fail "--set did not reach the saved config"
expect_error 'unknown key "lrr"' "$stride" train --config tiny.json --data corpus.txt --out set2 \
  --set train.lrr=1
expect_error "only train.\* keys can change" "$stride" train --resume set_run --data corpus.txt \
  --set model.d_model=64
expect_error "already holds a run" "$stride" train --config tiny.json --data corpus.txt --out run
expect_error "is already at step 40; --steps is the step to end at" \
  "$stride" train --resume run --steps 3 --data corpus.txt
if "$stride" train --resume run --config tiny.json --data corpus.txt > both.log 2>&1; then
  fail "train took --resume with --config"
fi
# Weights out and in: export writes the state dict with the config and the
# tokenizer as metadata; --weights then evaluates, samples and trains from it
# as --ckpt does.
"$stride" export --ckpt run --out exported.safetensors > export.log
grep -q "with its config and tokenizer as metadata" export.log || fail "export"
"$stride" eval --ckpt run --data corpus.txt | grep "whole split" > eval_ckpt.txt
"$stride" eval --weights exported.safetensors --data corpus.txt | grep "whole split" > eval_weights.txt
cmp -s eval_ckpt.txt eval_weights.txt || fail "eval --weights differs from eval --ckpt"
"$stride" generate --weights exported.safetensors --prompt "the " --tokens 20 --seed 1 > g4.txt
cmp -s g1.txt g4.txt || fail "generate --weights differs from generate --ckpt"
"$stride" train --config tiny.json --data corpus.txt --out from_weights --weights exported.safetensors \
  --steps 2 --sample 0 > from_weights.log
sed 's/"d_model": 32/"d_model": 48/' tiny.json > wide.json
set +e
"$stride" eval --weights exported.safetensors --config wide.json --data corpus.txt > out.txt 2> err.txt
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "tok_embeddings.weight expects" err.txt ||
  fail "weights of another config: exit $rc, $(head -c 300 err.txt)"

# A run that cannot fit is refused before it starts, with what it would need.
sed "s/\"d_model\": 32/\"d_model\": 65536/" tiny.json > huge_model.json
expect_error "a training step of this config needs" \
  "$stride" train --config huge_model.json --data corpus.txt --out huge
[ ! -e huge ] || fail "a refused run left a directory"
expect_error "the model of this config needs" "$stride" init --config huge_model.json --out huge.safetensors
sed 's/"n_layers": 2/"n_layers": 100000000/' tiny.json > deep.json
expect_error "more than the 1000000 stride lists" timeout 20 "$stride" inspect --config deep.json
# A FIFO in place of the checkpoint is refused at once, not waited on.
mkdir fifo_run
cp run/tokenizer.json fifo_run/
mkfifo fifo_run/checkpoint.safetensors
expect_error "not a regular file (a FIFO)" timeout 20 "$stride" eval --ckpt fifo_run --data corpus.txt
"$stride" --version | grep -q "^stride [0-9]" || fail "--version"
set +e
"$stride" trian > out.txt 2> err.txt
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q 'Did you mean "train"' err.txt || fail "a misspelled command: $(cat err.txt)"
for bad in "train --steps 99999999999999999999 --config tiny.json" "--threads -1 train" \
  "generate --ckpt run --temperature -1" "generate --ckpt run --top-p 0"; do
  set +e
  # shellcheck disable=SC2086  # the words are the arguments
  "$stride" $bad > out.txt 2> err.txt
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "'$bad' exited $rc, expected 2"
  grep -q "must be\|too large" err.txt || fail "'$bad' said: $(cat err.txt)"
done
"$stride" init --config tiny.json --out w.safetensors > /dev/null
[ -s w.safetensors ] || fail "init wrote nothing"
echo "cli ok"
