#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The same bits on ARM as on x86: every output of tools/bits_set.sh (states of every model,
# scenes with obstacles, predators and targets, a checkpoint, flock statistics and a sweep's,
# images and the program's frames) made by the reference build (x86-64, its scalar kernels: the
# reference; then every other ISA this CPU has) and by the build under test (aarch64 under
# qemu-user: scalar and NEON), compared byte for byte. A difference fails and names the
# output, the build and the ISA. docs/ARM.md.
# Usage: tools/arm_bits.sh REF_SHOAL TEST_SHOAL
#   TEST_RUN      how to run TEST_SHOAL (default: qemu-aarch64; empty: directly)
#   TEST_ISAS     its ISAs (default: scalar neon), REF_ISAS the reference's (default: those of
#                 this CPU), BITS_STEPS steps per state (default: 6), BITS_KEEP=DIR keeps files
set -eu
REF=$(realpath "$1")
TEST=$(realpath "$2")
TEST_RUN=${TEST_RUN-qemu-aarch64}
TEST_ISAS=${TEST_ISAS:-scalar neon}
BITS_STEPS=${BITS_STEPS:-6}
cd "$(dirname "$0")/.."
if [ -z "${REF_ISAS:-}" ]; then
    REF_ISAS="scalar"
    grep -qw avx2 /proc/cpuinfo && REF_ISAS="$REF_ISAS avx2"
    grep -w avx512f /proc/cpuinfo | grep -w avx512bw | grep -w avx512dq | grep -qw avx512vl &&
        REF_ISAS="$REF_ISAS avx512"
fi
W=$(mktemp -d /tmp/shoal-armbits.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/in" "$W/ref" "$W/test"
# Under qemu a spinning OpenMP thread costs emulated instructions: waiting threads sleep.
export OMP_WAIT_POLICY=passive
outputs=0 runs=0 failed=0

ref() { "$REF" "$@"; }
# shellcheck disable=SC2086
tst() { $TEST_RUN "$TEST" "$@"; }

# check LABEL BUILD ISA THREADS REFFILE FILE: one comparison, named when it fails
check() {
    runs=$((runs + 1))
    if ! cmp -s "$5" "$6"; then
        failed=$((failed + 1))
        echo "arm_bits: DIFFERS: $1: $2 $3 ($4 threads) is not the x86 scalar output:" \
            "$(cmp "$5" "$6" 2>&1 | head -1)" >&2
    fi
}

# A run that failed: named, counted, the rest goes on.
broken() {
    failed=$((failed + 1))
    echo "arm_bits: FAILED: $1: $2 $3 ($4 threads) did not make its output:" \
        "$(tail -1 "$W/err" 2>/dev/null)" >&2
}

# The reference run of an ISA-dependent output, then every other run compared with it:
# $1 label, $2 file name; make_out BUILD ISA THREADS OUT (set by the caller) makes it.
each_isa() {
    local label=$1 name=$2 t=1
    outputs=$((outputs + 1))
    make_out ref scalar 1 "$W/ref/$name" || { broken "$label" x86-64 scalar 1; return 0; }
    for isa in $REF_ISAS; do
        [ "$isa" = scalar ] && continue
        if make_out ref "$isa" 2 "$W/ref/x_$name"; then
            check "$label" x86-64 "$isa" 2 "$W/ref/$name" "$W/ref/x_$name"
        else
            broken "$label" x86-64 "$isa" 2
        fi
    done
    for isa in $TEST_ISAS; do
        if make_out tst "$isa" "$t" "$W/test/$name"; then
            check "$label" aarch64 "$isa" "$t" "$W/ref/$name" "$W/test/$name"
        else
            broken "$label" aarch64 "$isa" "$t"
        fi
        t=2 # the first ISA on one thread, the others on two
    done
}

input() { # name, init args
    outputs=$((outputs + 1))
    # shellcheck disable=SC2086
    ref init $2 --out "$W/in/$1.npy" >/dev/null 2>"$W/err" || { broken "init $1" x86-64 - -; return 0; }
    # shellcheck disable=SC2086
    if tst init $2 --out "$W/test/init_$1.npy" >/dev/null 2>"$W/err"; then
        check "init $1" aarch64 - - "$W/in/$1.npy" "$W/test/init_$1.npy"
    else
        broken "init $1" aarch64 - -
    fi
}

step() { # name, input, step args
    local args=$3 in=$2
    make_out() {
        # shellcheck disable=SC2086
        $1 step $args --in "$W/in/$in.npy" --out "$4" --steps "$BITS_STEPS" --simd "$2" \
            --threads "$3" --quiet >/dev/null 2>"$W/err"
    }
    each_isa "step $1" "$1.npy"
}

ckpt() { # name, input, step args
    local args=$3 in=$2
    make_out() {
        # shellcheck disable=SC2086
        $1 step $args --in "$W/in/$in.npy" --out - --checkpoint "$4" --steps "$BITS_STEPS" \
            --simd "$2" --threads "$3" --quiet >/dev/null 2>"$W/err"
    }
    each_isa "checkpoint $1" "$1.ckpt"
}

render() { # name, input, render args
    local args=$3 in=$2
    make_out() {
        # shellcheck disable=SC2086
        $1 render $args --in "$W/in/$in.npy" --out "$4" --size 320x200 --simd "$2" \
            --threads "$3" >/dev/null 2>"$W/err"
    }
    each_isa "render $1" "$1.png"
}

run() { # name, run args: the frames as one file (their PNGs in order)
    local args=$2
    make_out() {
        rm -rf "$W/frames"
        # shellcheck disable=SC2086
        $1 run --headless $args --frames 3 --out "$W/frames" --size 320x200 --steps-per-frame 1 \
            --hud off --simd "$2" --threads "$3" >/dev/null 2>"$W/err"
        local n
        n=$(find "$W/frames" -name '*.png' | wc -l)
        [ "$n" -eq 3 ] || return 1
        cat "$W"/frames/*.png >"$4"
    }
    each_isa "run $1" "$1.frames"
}

stats() { # name, state A, state B (inputs, or reference outputs of step lines)
    outputs=$((outputs + 1))
    local a=$W/in/$2.npy b=$W/in/$3.npy
    [ -f "$a" ] || a=$W/ref/$2.npy
    [ -f "$b" ] || b=$W/ref/$3.npy
    ref compare "$a" "$b" --json "$W/ref/$1.json" >/dev/null 2>"$W/err" || true
    [ -s "$W/ref/$1.json" ] || { broken "stats $1" x86-64 - -; return 0; }
    tst compare "$a" "$b" --json "$W/test/$1.json" >/dev/null 2>"$W/err" || true
    if [ -s "$W/test/$1.json" ]; then
        check "stats $1" aarch64 - - "$W/ref/$1.json" "$W/test/$1.json"
    else
        broken "stats $1" aarch64 - -
    fi
}

sweep() { # name, sweep args: sweep.csv (members' flock statistics; AUTO's ISA, 1 thread)
    outputs=$((outputs + 1))
    # shellcheck disable=SC2086
    ref sweep $2 --out "$W/ref/$1" --threads 1 --quiet >/dev/null 2>"$W/err" ||
        { broken "sweep $1" x86-64 auto 1; return 0; }
    # shellcheck disable=SC2086
    if tst sweep $2 --out "$W/test/$1" --threads 1 --quiet >/dev/null 2>"$W/err"; then
        check "sweep $1" aarch64 auto 1 "$W/ref/$1/sweep.csv" "$W/test/$1/sweep.csv"
    else
        broken "sweep $1" aarch64 auto 1
    fi
}

start=$(date +%s)
# shellcheck source=tools/bits_set.sh
. tools/bits_set.sh
if [ -n "${BITS_KEEP:-}" ]; then
    mkdir -p "$BITS_KEEP" && cp -r "$W/in" "$W/ref" "$W/test" "$BITS_KEEP/"
fi
echo "arm_bits: $outputs outputs, $runs comparisons with the x86 scalar output" \
    "(x86-64: $REF_ISAS; aarch64: $TEST_ISAS), $failed different, $(($(date +%s) - start)) s"
[ "$failed" -eq 0 ]
