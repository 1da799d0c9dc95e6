#!/usr/bin/env bash
# Runs the README's "From Python" commands verbatim (its ```sh blocks, in order),
# as a new user would: in a copy of the working tree (the files git tracks or
# would track, edits included, no build directories), with plain pip and so
# build isolation. Then checks that the package they installed imports and
# computes. A README edit changes what runs here. Prints the time it took.
#   tools/readme_python_check.sh
# ccache serves the objects a build of the same flags made in another tree
# (the Makefile sets CCACHE_BASEDIR for every build), as paths under
# CCACHE_BASEDIR are hashed relative to it.
set -euo pipefail
cd "$(dirname "$0")/.."

commands=$(awk '/^## /{section = ($0 == "## From Python")} \
  section && /^```sh$/{block = 1; next} block && /^```$/{block = 0; next} block' README.md)
if [ -z "$commands" ]; then
  echo "readme_python_check: README.md has no \`\`\`sh block under \"## From Python\"." >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree="$tmp/stride"
mkdir "$tree"
# Files deleted in the working tree but not yet in the index are skipped.
git ls-files -z -co --exclude-standard |
  while IFS= read -r -d '' f; do
    if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
  done |
  tar --null -T - -cf - | tar -xf - -C "$tree"
printf '%s\n' "$commands" >"$tmp/readme.sh"

echo "readme_python_check: running README.md's \"From Python\" commands in $tree:"
sed 's/^/  /' "$tmp/readme.sh"
(cd "$tree" && CCACHE_BASEDIR="$tree" bash -e -o pipefail "$tmp/readme.sh")

# From a directory of its own, so that nothing but the installed package can
# be imported as stride.
mkdir "$tmp/elsewhere"
got=$(cd "$tmp/elsewhere" && "$tree/.venv/bin/python" -c '
import sys
import stride
print(stride.__file__.startswith(sys.argv[1] + "/.venv/"))
print(stride.tensor([[1.0, 2.0], [3.0, 4.0]]) @ stride.ones(2))' "$tree")
expected=$'True\ntensor([3., 7.])'
if [ "$got" != "$expected" ]; then
  printf 'readme_python_check: the installed package printed\n%s\ninstead of\n%s\n' \
    "$got" "$expected" >&2
  exit 1
fi
echo "readme_python_check: passed in ${SECONDS}s."
