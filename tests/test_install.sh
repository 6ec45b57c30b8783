#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed library is usable on its own: `meson install` into a scratch root, then
# examples/hello_shoal.c is built with `pkg-config --cflags --libs shoal` alone (shared
# library), and once more statically (`pkg-config --static`), and both are run: each
# must write a PNG of the school. The shared library must export the public API and
# nothing else. Usage (from meson test): test_install.sh SOURCE_ROOT BUILD_ROOT
set -euo pipefail
src=$1 build=$2
cc=${CC:-cc}
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config missing"; exit 77; }
tmp=$(mktemp -d /tmp/shoal-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
DESTDIR=$tmp/root meson install -C "$build" --no-rebuild --quiet >/dev/null
pcdir=$(dirname "$(find "$tmp/root" -name shoal.pc | head -1)")
[ -f "$pcdir/shoal.pc" ] || { echo "FAIL: no shoal.pc installed"; exit 1; }
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# the files sit under a scratch root, not at the prefix: tell pkg-config where the prefix is
prefix=$(pkg-config --variable=prefix shoal)
pc() { pkg-config --define-variable=prefix="$tmp/root$prefix" "$@"; }
libdir=$(pc --variable=libdir shoal)
# a consumer sees only the installed headers: no -I into the source tree
flags=$(pc --cflags --libs shoal)
case $flags in *"$src"*) echo "FAIL: pkg-config points into the source tree: $flags"; exit 1 ;; esac
# a sanitizer build's library needs the sanitizer runtime in the program that loads it
san=
# (no grep -q on a pipe: nm could die of SIGPIPE and pipefail would say no)
if nm -D -u "$libdir/libshoal.so" | grep '__asan_\|__ubsan_' >/dev/null; then
  san="-fsanitize=address,undefined"
  cc=clang
fi
$cc -std=c11 -Wall -Wextra -Werror $san "$src/examples/hello_shoal.c" $flags -o "$tmp/hello"
# every installed header compiles on its own (it includes what it uses)
incdir=$(pc --variable=includedir shoal)
for h in "$incdir"/shoal/*.h; do
  printf '#include <shoal/%s>\nint main(void) { return 0; }\n' "${h##*/}" >"$tmp/one.c"
  $cc -std=c11 -Wall -Wextra -Werror -c "$tmp/one.c" $(pc --cflags shoal) -o "$tmp/one.o" ||
    { echo "FAIL: shoal/${h##*/} does not compile alone"; exit 1; }
done
export SHOAL_ASSETS=$(find "$tmp/root" -type d -path '*/share/shoal' | head -1)
# the installed library first; the caller's path after it (libshoal's own dependencies,
# e.g. inih, may live outside the system's directories, as on the GPU device)
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/hello" "$tmp/a.png" 2000 30
# C++: the headers' extern "C" guards let a C++ program link against the C library (and
# every header compiles as C++ too, alone and through shoal.h)
cxx=${CXX:-c++}
[ -n "$san" ] && cxx=clang++
if command -v "$cxx" >/dev/null; then
  for h in "$incdir"/shoal/*.h; do
    printf '#include <shoal/%s>\nint main() { return 0; }\n' "${h##*/}" >"$tmp/one.cpp"
    $cxx -std=c++11 -Wall -Wextra -Werror -c "$tmp/one.cpp" $(pc --cflags shoal) -o "$tmp/one.o" ||
      { echo "FAIL: shoal/${h##*/} does not compile as C++"; exit 1; }
  done
  $cxx -std=c++11 -Wall -Wextra -Werror $san "$src/tests/install_cxx.cpp" $flags -o "$tmp/cxx"
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/cxx"
else
  echo "FAIL: no C++ compiler ($cxx) for the C++ link test"; exit 1
fi
# static: the same program with libshoal.a and its private dependencies (and libgcov when
# the library was built with -Db_coverage, as tools/test.sh's build-min is)
cov=
# (grep reads all of nm's output: with -q, nm could die of SIGPIPE and pipefail say no)
if nm "$libdir/libshoal.a" 2>/dev/null | grep '__gcov_init' >/dev/null; then
  cov=--coverage
fi
if [ -z "$san" ] && [ -f "$libdir/libshoal.a" ] && ! nm "$libdir/libshoal.a" 2>/dev/null | grep cuda >/dev/null; then
  $cc -std=c11 $cov "$src/examples/hello_shoal.c" $(pc --cflags shoal) \
    "$libdir/libshoal.a" $(pc --static --libs-only-other --libs-only-l shoal | sed 's/-lshoal//') \
    -o "$tmp/hello_static"
  "$tmp/hello_static" "$tmp/b.png" 2000 30
  cmp "$tmp/a.png" "$tmp/b.png" || { echo "FAIL: static and shared builds drew different images"; exit 1; }
fi
for f in "$tmp/a.png"; do
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "FAIL: $f is not a PNG"; exit 1; }
done
# docs/LIBRARY.md's first program (its first ```c block) builds and runs, and writes the
# bytes that the installed shoal program's init + step write, as the page says
awk '/^```c$/ {on = 1; next} /^```$/ && on {exit} on' "$src/docs/LIBRARY.md" >"$tmp/first.c"
[ -s "$tmp/first.c" ] || { echo "FAIL: no C example in docs/LIBRARY.md"; exit 1; }
$cc -std=c11 -Wall -Wextra -Werror $san "$tmp/first.c" $flags -o "$tmp/first"
(cd "$tmp" && LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ./first)
bin=$(dirname "$(find "$tmp/root" -type f -name shoal -path '*/bin/*' | head -1)")
if [ -x "$bin/shoal" ]; then
  "$bin/shoal" init --model heading --count 2000 --seed 7 --keep-geometry --out "$tmp/start.npy"
  "$bin/shoal" step --model heading --in "$tmp/start.npy" --steps 120 --seed 7 --out "$tmp/cli.npy"
  cmp "$tmp/end.npy" "$tmp/cli.npy" ||
    { echo "FAIL: docs/LIBRARY.md's program and shoal init + step wrote different states"; exit 1; }
fi
# the Python package, where this build has it: `meson install` put it where the interpreter
# that built it looks under the prefix (Debian's python3 and /usr/local:
# /usr/local/lib/python3.X/dist-packages, not Meson's lib/python3/dist-packages, which only
# /usr's python path has), with its meshes and scenes inside; it imports, steps, renders and
# finds a scene from there in a clean environment, away from the checkout (not in a sanitizer
# build: the interpreter lacks the sanitizer runtime the extension needs)
ext=$(find "$tmp/root" -name '_shoal*.so' | head -1)
if [ -n "$ext" ] && [ -z "$san" ]; then
  py=${PYTHON:-/usr/bin/python3}
  site=$(dirname "$(dirname "$ext")")
  [ -f "$site/shoal/__init__.py" ] && [ -f "$site/shoal/__init__.pyi" ] &&
    [ -f "$site/shoal/assets/fish.obj" ] && [ -f "$site/shoal/assets/scenes/school.ini" ] ||
    { echo "FAIL: the installed Python package lacks __init__.py, its .pyi or its assets"; exit 1; }
  want=$("$py" -c "
import os, site, sys, sysconfig
prefix = os.path.normpath(sys.argv[1])
for p in site.getsitepackages():
    if os.path.relpath(p, prefix).split(os.sep)[0] == 'lib':
        print(p); break
else:
    print(sysconfig.get_path('platlib', 'posix_prefix', vars={'base': prefix, 'platbase': prefix}))
" "$prefix")
  [ "$site" = "$tmp/root$want" ] ||
    { echo "FAIL: the Python package went to ${site#"$tmp/root"}, $py looks in $want"; exit 1; }
  (cd "$tmp" && env -i HOME="$tmp" PATH=/usr/bin:/bin PYTHONPATH="$site" "$py" -c "
import shoal
assert shoal.__file__.startswith('$site'), shoal.__file__
s = shoal.Simulation(model='classic', count=64, seed=2)
s.step(3)
assert shoal.render(s.state, size=(32, 24)).any()
sc = shoal.scene_path('school')
assert sc.startswith('$site'), sc
print('installed Python package: shoal', shoal.__version__, s, 'scene', sc)
") || { echo "FAIL: the installed Python package does not work from a clean environment"; exit 1; }
fi
# exports: shoal_* only
bad=$(nm -D --defined-only "$libdir/libshoal.so" | awk '{print $3}' | grep -v '^shoal_' || true)
[ -z "$bad" ] || { echo "FAIL: libshoal.so exports non-API symbols:"; echo "$bad" | head; exit 1; }
n=$(nm -D --defined-only "$libdir/libshoal.so" | wc -l)
echo "installed library: $n exported symbols, example ran (shared and static)"
echo "1 passed, 0 failed"
