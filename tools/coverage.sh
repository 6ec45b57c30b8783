#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Line and branch coverage of a build configured with -Db_coverage=true, after its tests ran
# (tools/test.sh does both on its build-min, so coverage costs no extra build or run).
# Prints the totals and one line per source folder; docs/TESTING.md records the figures.
# Usage: tools/coverage.sh [BUILD_DIR]   (default build-min, as tools/test.sh makes it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-min}
json=$build/coverage-summary.json
# The rasterizer's AVX2 and AVX-512 instances are left out: each compiles rast_kernel.h with
# another branch of core/simd.h, so one inline function sits at different lines in two
# instances, which gcovr 5.2 cannot merge (an assertion, no report). The scalar instance,
# the reference the others must match bit for bit, covers the kernel's lines.
gcovr -r . --object-directory "$build" --filter 'src/' --exclude 'src/gpu/' \
  --exclude-directories '.*libshoal_render_avx(2|512)\.a\.p' \
  --exclude-unreachable-branches --gcov-ignore-parse-errors --json-summary "$json" --json-summary-pretty >/dev/null 2>"$build/gcovr.log" ||
  { tail -5 "$build/gcovr.log" >&2; echo "coverage: gcovr failed (log: $build/gcovr.log)" >&2; exit 1; }
# Counters of code run by several threads at once (test_concurrent) are not atomic, and gcov
# can then print a negative count that gcovr cannot parse: it skips that line and says so.
if grep -q 'Unrecognized GCOV output' "$build/gcovr.log"; then
  echo "note: gcovr skipped $(grep -c 'Unrecognized GCOV output' "$build/gcovr.log") racy counter line(s) ($build/gcovr.log)"
fi
/usr/bin/python3 - "$json" "$build" <<'EOF'
import json, sys, collections
data = json.load(open(sys.argv[1]))
dirs = collections.OrderedDict()
for f in sorted(data["files"], key=lambda f: f["filename"]):
    d = f["filename"].rsplit("/", 1)[0]
    t = dirs.setdefault(d, [0, 0, 0, 0])
    t[0] += f["line_covered"]; t[1] += f["line_total"]
    t[2] += f["branch_covered"]; t[3] += f["branch_total"]
def pct(a, b):
    return 100.0 * a / b if b else 100.0
print("coverage (%s, whole suite):" % sys.argv[2])
print("  %-12s %16s %18s" % ("folder", "lines", "branches"))
for d, t in dirs.items():
    print("  %-12s %6.1f%% %4d/%-4d %6.1f%% %5d/%-5d" % (d, pct(t[0], t[1]), t[0], t[1],
                                                       pct(t[2], t[3]), t[2], t[3]))
print("  %-12s %6.1f%% %4d/%-4d %6.1f%% %5d/%-5d" % (
    "total", data["line_percent"], data["line_covered"], data["line_total"],
    data["branch_percent"], data["branch_covered"], data["branch_total"]))
EOF
