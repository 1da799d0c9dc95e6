#!/usr/bin/env python3
"""Checks, in the machine code of a built libstride, that code outside the
CPU backend's higher levels runs on every x86-64 CPU (Note [CPU
capabilities] in src/backends/cpu/capability.h):

- a function that is not in stride::cpu::capability_avx2 or
  capability_avx512 (the library's baseline code, the inline functions and
  templates the levels share, and every file's load-time initialiser, which
  runs on every CPU) holds no AVX instruction (VEX or EVEX: mnemonics
  v..., ymm, zmm or mask registers);
- a function in capability_avx2 holds no AVX-512 instruction (zmm, mask
  registers, xmm/ymm 16-31).

A violation means the linker kept a higher level's copy of a shared
function, or a higher level's file runs code when the library loads.

    tools/check_cpu_levels.py build/libstride.so
"""

import re
import subprocess
import sys

AVX = re.compile(r"%[yz]mm|%k[0-7]\b")
AVX512 = re.compile(r"%zmm|%k[0-7]\b|%[xy]mm(1[6-9]|2[0-9]|3[01])\b")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")


def level_of(name):
    if "capability_avx512" in name:
        return "avx512"
    if "capability_avx2" in name:
        return "avx2"
    return "default"


def violation(level, instruction):
    """What of `instruction` (mnemonic and operands) its level may not run."""
    if level == "default":
        mnemonic = instruction.split()[0] if instruction.split() else ""
        if mnemonic.startswith("v") or AVX.search(instruction):
            return "AVX"
    elif level == "avx2" and AVX512.search(instruction):
        return "AVX-512"
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    disassembly = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", "-C", sys.argv[1]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    function, level, functions = None, "default", 0
    bad = {}
    for line in disassembly.splitlines():
        match = FUNCTION.match(line)
        if match:
            function, level = match.group(1), level_of(match.group(1))
            functions += 1
            # A clone (.constprop, .isra, ...) is local to the file that made
            # it and runs only from that file's code, at its level; a .cold
            # part belongs to the function it was split from.
            if "[clone ." in function:
                function = None
            continue
        if function is None or level == "avx512" or "\t" not in line:
            continue
        instruction = line.split("\t", 1)[1].strip()
        what = violation(level, instruction)
        if what and function not in bad:
            bad[function] = f"{what} in {level} code: {instruction}"
    for function, why in sorted(bad.items()):
        print(f"error: {function}: {why}")
    print(f"check_cpu_levels: {functions} functions, {len(bad)} violation(s)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
