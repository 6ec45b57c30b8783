#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The program is a client of its own library (issue 15, docs/ARCHITECTURE.md): every
# #include "..." in src/app names a public header (shoal/*.h), one of src/app's own headers,
# src/support's (the program's helpers: scenes, JSON, peak, the baseline grid) or the MPI
# front end (mpi_app.h). Prints each include that breaks this and exits 1.
cd "$(dirname "$0")/.."
bad=$(grep -Hn '^#include "' src/app/*.c src/app/*.h |
  grep -vE '#include "(shoal/[a-z_]+\.h|app/[a-z_]+\.h|support/[a-z_]+\.h|mpi_app\.h)"' || true)
if [ -n "$bad" ]; then
  echo "src/app includes a header outside the public API:" >&2
  echo "$bad" >&2
  exit 1
fi
for f in $(grep -ho '#include "app/[a-z_]*\.h"' src/app/*.c src/app/*.h | sort -u | sed 's/#include "//; s/"$//'); do
  [ -f "src/$f" ] || { echo "src/app includes $f, which is not in src/app" >&2; exit 1; }
done
echo "layering: src/app includes only public, app, support and mpi_app headers"
