#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No fused multiply-add in the library (DESIGN.md: -ffp-contract=off): a fused a*b + c rounds
# once where the scalar reference rounds twice, so one contracted expression in a kernel
# moves bits on one ISA or architecture only. GCC contracts by default (-ffp-contract=fast
# for GNU C): into FMLA/FMADD on aarch64, into VFMADD wherever -mavx512f (which implies
# FMA) or -mfma is on. Two checks, native and cross builds alike:
#  1. every compile of the build (compile_commands.json) has -ffp-contract=off, and nothing
#     after it turns contraction or fast math back on (CUDA's: -fmad=false);
#  2. the library's machine code (OBJDUMP -d LIB) has no fused multiply-add instruction,
#     except in the functions of the list below, which call C's fma() on purpose.
# Usage: test_no_fma.sh OBJDUMP LIBSHOAL.a BUILD_ROOT
set -eu
objdump=$1
lib=$2
build=$3

# Functions allowed a fused instruction: an explicit fma() (one rounding, the same on every
# architecture: IEEE's fusedMultiplyAdd), never a contraction.
allowed='shoal_sweep_vary' # io/sweep.c: the grid value a + i * step, rounded once

# 1. the flags
python3=$(command -v /usr/bin/python3 || command -v python3)
"$python3" - "$build/compile_commands.json" <<'EOF'
import json, shlex, sys
cmds = json.load(open(sys.argv[1]))
bad = []
for c in cmds:
    args = c.get("arguments") or shlex.split(c["command"])
    if any(a.endswith("nvcc") for a in args[:2]):
        # CUDA: the device code's contraction switch (the host side has no float kernel)
        if "-fmad=false" not in args:
            bad.append(c["file"] + " (nvcc without -fmad=false)")
        continue
    if not any(a.endswith("gcc") or a.endswith("cc") or a.endswith("clang") for a in args[:2]):
        continue
    on = None
    for a in args:
        if a.startswith("-ffp-contract="):
            on = a == "-ffp-contract=off"
        elif a in ("-ffast-math", "-Ofast", "-funsafe-math-optimizations"):
            on = False
    if on is not True:
        bad.append(c["file"])
if bad:
    print("compiled without -ffp-contract=off (or with fast math after it):", file=sys.stderr)
    for f in bad:
        print("  " + f, file=sys.stderr)
    sys.exit(1)
print("flags: %d compiles, every one with -ffp-contract=off (nvcc: -fmad=false)" % len(cmds))
EOF

# 2. the instructions: aarch64 (NEON and scalar; SVE's too) and x86 (FMA3, FMA4)
pattern='	(fmla|fmls|fmlal2?|fmlsl2?|fmadd|fmsub|fnmadd|fnmsub|fmad|fmsb|fnmad|fnmsb|fnmla|fnmls|bfmla[a-z]*|vfn?madd[a-z0-9]*|vfn?msub[a-z0-9]*|vfmaddsub[a-z0-9]*|vfmsubadd[a-z0-9]*)[ 	.]'
found=$("$objdump" -d --no-show-raw-insn "$lib" | awk -v pat="$pattern" '
    /file format/ { obj = $1 }
    /^[0-9a-f]+ </ { fn = $2; gsub(/[<>:]/, "", fn) }
    $0 ~ pat { n[obj " " fn]++ }
    END { for (k in n) print k, n[k] }' | sort)
insns=$("$objdump" -d --no-show-raw-insn "$lib" | grep -c '^ *[0-9a-f]*:' || true)
bad=$(printf '%s\n' "$found" | awk -v ok=" $allowed " 'NF && index(ok, " " $2 " ") == 0')
if [ -n "$bad" ]; then
    echo "fused multiply-add instructions in the library (object, function, count):" >&2
    echo "$bad" >&2
    exit 1
fi
if [ "$insns" -lt 10000 ]; then
    echo "$objdump found only $insns instructions in $lib: not a disassembly" >&2
    exit 1
fi
echo "instructions: $insns in $(basename "$lib"), no fused multiply-add outside fma() calls" \
    "($(printf '%s\n' "$found" | awk 'NF' | wc -l) such function)"
