#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shoal verify on outside programs (issue 32): tests/verify_seeds.py writes an independent
# float32 NumPy transcription of each seed and the same transcriptions with one planted rule
# error each (a radius, a weight, a strict vs non-strict threshold, a missing wall term;
# heading, which has no walls: a missing target term; steer also an un-normalised alignment
# vector, named as no single parameter whose closest term is alignment, and a strict radius
# test on a lattice whose separation neighbours all sit on the radius), in the layouts verify
# reads. verify
# must say "agrees" for every clean transcription (against both references) and name the
# planted term for every other (exit 1); the strict variants must be named as a neighbour
# exactly on the threshold. tools/verify_plot.py draws one report (a part skipped without
# matplotlib). SKIP (77) without numpy.
# usage: test_verify_seeds.sh SHOAL [SOURCE_ROOT]
set -u
S=$1
ROOT=${2:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
if ! $PY -c 'import numpy' 2>/dev/null; then
    echo "SKIP: $PY has no numpy (python3-numpy)"
    exit 77
fi
W=$(mktemp -d /tmp/shoal-vseeds.XXXXXX)
trap 'rm -rf "$W"' EXIT
$PY "$ROOT/tests/verify_seeds.py" "$W" || { echo "FAIL: verify_seeds.py"; exit 1; }
fail=0 cases=0 skipped=0
while IFS=$'\t' read -r name expect rest; do
    IFS=$'\t' read -r -a args <<<"$rest"
    cases=$((cases + 1))
    out=$("$S" verify "${args[@]}" --quiet --csv "$W/$name.csv" 2>&1)
    rc=$?
    verdict=$(grep '^summary' <<<"$out" | sed 's/.*verdict: //')
    want=0
    [ "$expect" != agrees ] && want=1
    bad=
    [ $rc -ne $want ] && bad="exit $rc, expected $want"
    case "$verdict" in "$expect"*) ;; *) bad="${bad:+$bad; }verdict '$verdict', expected '$expect'" ;; esac
    case $name in *-strict | *-strict-on) grep -q "neighbour exactly on" <<<"$out" || bad="${bad:+$bad; }no strictness named" ;; esac
    case $name in *-unnormalised) grep -q "closest: alignment" <<<"$out" || bad="${bad:+$bad; }the closest term is not alignment" ;; esac
    if [ "$expect" = agrees ]; then
        out64=$("$S" verify "${args[@]}" --quiet --reference f64 2>&1)
        grep -q "verdict: agrees" <<<"$out64" || bad="${bad:+$bad; }f64: $(grep '^summary' <<<"$out64")"
    fi
    if [ -n "$bad" ]; then
        echo "FAIL $name: $bad"
        echo "$out" | sed 's/^/    /'
        fail=1
    else
        echo "ok   $name: $verdict"
        grep '^step 0' <<<"$out" | sed 's/^.*): /       step 0: /'
    fi
done <"$W/cases.tsv"
[ $cases -eq 27 ] || { echo "FAIL: $cases cases, expected 27"; fail=1; }
if $PY -c 'import matplotlib' 2>/dev/null; then
    $PY "$ROOT/tools/verify_plot.py" "$W/plot.png" "$W/steer-clean.csv" "$W/steer-radius.csv" >/dev/null &&
        [ -s "$W/plot.png" ] || { echo "FAIL: tools/verify_plot.py"; fail=1; }
else
    echo "# SKIP (part): tools/verify_plot.py needs matplotlib"
    skipped=1
fi
[ $fail -ne 0 ] && exit 1
[ $skipped -ne 0 ] && exit 77
exit 0
