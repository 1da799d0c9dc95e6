# Sourced by the command line's data-parallel tests (cli_distributed_test.sh,
# cli_env_launch_test.sh), in their work directory: fail(), losses() of a
# run, and the run they train - a corpus and a tiny Llama config whose
# deterministic shards make 1, 2 and 4 processes train bit for bit alike.

fail() {
  echo "FAIL: $*"
  exit 1
}

losses() { grep -o '"\(train_loss\|val_loss\)":[^,}]*' "$1/metrics.jsonl"; }

for i in $(seq 300); do echo "the quick brown fox jumps over the lazy dog; so it goes."; done >corpus.txt
cat >tiny.json <<'JSON'
{"name": "tiny",
 "model": {"arch": "llama", "d_model": 32, "n_layers": 2, "n_heads": 4, "context": 16},
 "train": {"steps": 30, "batch_size": 8, "optimizer": "adamw", "lr": 3e-3,
           "eval_interval": 10, "eval_batches": 2, "checkpoint_interval": 10,
           "deterministic_shards": 4}}
JSON
