#!/usr/bin/env python3
"""Fails on references a reader of the repository cannot follow: a file of
the tree cited in a comment or a document that does not exist, a cited
issue number ("issue 7"), which the tree does not hold, and the team's
notes outside the tree (STYLE.md, DESIGN.md, ../shared), which it must not
depend on.

    tools/check_references.py [SOURCE_DIR]

Comments are what follows // or a line-leading #; Markdown files are read
whole. A path counts as cited when it starts at one of the tree's top-level
folders; patterns (a * or a trailing _) and shell or CMake variables before
it ($src/..., ${PROJECT_SOURCE_DIR}/...) are not paths of this tree.
"""

import pathlib
import re
import subprocess
import sys

TOP = "src|include|tests|tools|bench|docs|models|apps|python|examples|configs|cmake|fuzz"
PATH = re.compile(r"(?<![A-Za-z0-9_./${}-])((?:" + TOP + r")/[A-Za-z0-9_./+-]*[A-Za-z0-9_*])")
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")
OUTSIDE = re.compile(r"\b(?:STYLE|DESIGN)\.md\b|\.\./shared\b")
HASH_COMMENTS = {".sh", ".py", ".cmake", ".toml", ".txt", ""}


def tracked_files(root: pathlib.Path) -> list:
    out = subprocess.run(
        ["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    return [root / name for name in out.splitlines()]


def commented_text(path: pathlib.Path, line: str) -> str:
    """The part of `line` a reader reads as prose."""
    if path.suffix == ".md":
        return line
    if path.suffix in (".cpp", ".h", ".cu", ".cuh"):
        at = line.find("//")
        return line[at:] if at >= 0 else ""
    if path.suffix in HASH_COMMENTS or path.name in ("Makefile", "CMakeLists.txt", "run"):
        return line if line.lstrip().startswith("#") else ""
    return ""


def problems(root: pathlib.Path):
    for path in tracked_files(root):
        name = path.relative_to(root)
        if path.suffix in (".safetensors", ".json", ".model", ".png") or not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(lines, 1):
            text = commented_text(path, line)
            if not text:
                continue
            where = f"{name}:{number}"
            for cited in PATH.findall(text):
                cited = cited.rstrip(".")
                if "*" in cited or cited.endswith("_"):
                    continue
                if not (root / cited).exists():
                    yield f"{where}: cites {cited}, which is not in the tree"
            for issue in ISSUE.findall(text):
                yield f'{where}: cites "{issue}"; say what is meant instead'
            for outside in OUTSIDE.findall(text):
                yield f"{where}: cites {outside}, which is outside the tree"


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = list(problems(root))
    for problem in found:
        print(problem)
    print(f"check_references: {len(found)} dangling reference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
