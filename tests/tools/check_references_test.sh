#!/usr/bin/env bash
# tools/check_references.py fails on planted dangling references (a missing
# file cited in a comment and in Markdown, an issue number, a note outside
# the tree) and passes the same tree once they are gone; code that is not a
# comment, patterns and variables are not citations.
# Usage: check_references_test.sh SOURCE_DIR
set -euo pipefail
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q .
mkdir -p src/core docs tools
printf '// the kernel: src/core/kernel.cpp and src/core/gone.cpp (see issue 12)\n' > src/core/a.cpp
printf '// the rule of STYLE.md\nint x = f("src/core/not_a_comment.cpp");\n' > src/core/kernel.cpp
printf 'Made by `tools/gen_missing.py`; patterns: `tools/gen_*.py`, `$src/tools/x.py`.\n' > docs/d.md
git add -A
set +e
out="$(python3 "$src/tools/check_references.py" . 2>&1)"
rc=$?
set -e
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }
[ "$rc" -eq 1 ] || fail "exited $rc on dangling references"
for expected in "src/core/a.cpp:1: cites src/core/gone.cpp" 'src/core/a.cpp:1: cites "issue 12"' \
    "src/core/kernel.cpp:1: cites STYLE.md" "docs/d.md:1: cites tools/gen_missing.py"; do
  grep -qF "$expected" <<< "$out" || fail "did not report: $expected"
done
[ "$(grep -c ": cites" <<< "$out")" -eq 4 ] || fail "reported more than the four planted references"
printf '// the kernel: src/core/kernel.cpp\n' > src/core/a.cpp
printf '// the rule, stated here\nint x = f("src/core/not_a_comment.cpp");\n' > src/core/kernel.cpp
printf 'Made by `tools/gen_*.py`, `$src/tools/x.py`.\n' > docs/d.md
python3 "$src/tools/check_references.py" . > /dev/null || fail "a clean tree failed"
echo "check_references catches dangling references"
