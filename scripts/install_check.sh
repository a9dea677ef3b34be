#!/usr/bin/env bash
# Uses an installed Anvil the way its consumers do: installs the build into
# a temporary prefix (then moves the prefix, so nothing may depend on the
# path it was installed to or on the build folder), checks the tree, builds
# examples/c_client out of tree with find_package and with pkg-config and
# runs it, builds examples/out_of_tree_plugin against Anvil::plugin_sdk and
# runs it through the installed conformance kit. About half a minute.
# usage: install_check.sh [BUILD_DIR]   (default $ANVIL_BUILD_DIR or build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${ANVIL_BUILD_DIR:-build}}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset ANVIL_PLUGIN_PATH
say() { echo "install check: $*"; }
fail() { echo "install check: FAILED: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/prefix"
P=$work/prefix

# The tree.
for f in bin/anvil include/anvil/anvil.h include/anvil/anvil_plugin.h lib/libanvil.so lib/libanvil.so.0 \
         lib/libanvil_pjrt.so lib/anvil_plugins/libanvil_plugin_cpu.so lib/cmake/Anvil/AnvilConfig.cmake \
         lib/cmake/Anvil/AnvilConfigVersion.cmake lib/pkgconfig/anvil.pc; do
  [ -e "$P/$f" ] || fail "$f is not installed"
done
major=$(sed -n 's/^#define ANVIL_ABI_MAJOR \([0-9]*\)$/\1/p' api/anvil/anvil.h)
soname=$(readelf -d "$P/lib/libanvil.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libanvil.so.$major" ] || fail "libanvil's SONAME is '$soname', not libanvil.so.$major"
bash scripts/check_exports.sh "$P/lib/libanvil.so" --header api/anvil/anvil.h anvil_ >/dev/null
bash scripts/check_exports.sh "$P/lib/libanvil_pjrt.so" GetPjrtApi >/dev/null
for plugin in "$P"/lib/anvil_plugins/*.so; do
  bash scripts/check_exports.sh "$plugin" anvil_plugin_get_api >/dev/null
done
"$P/bin/anvil" plugins | grep -q "plugin cpu .*($P/.*/anvil_plugins/libanvil_plugin_cpu.so)" ||
  fail "bin/anvil does not find the installed CPU plugin"
say "tree, SONAME $soname, exports: ok"

# A framework: the C client, built with CMake and with pkg-config.
expected=$'result 0: f32[2,2] {5.125, 5.75, 9.0625, 10.25}\nresult 1: f32[2,3] {0.5, 1, 1.5, 2, 2.5, 3}'
run_client() {
  local out
  out=$("$1" examples/c_client/program.hlo) || fail "$1 failed"
  [ "$(grep '^result' <<<"$out")" = "$expected" ] || fail "$1 printed: $out"
}
cmake -S examples/c_client -B "$work/c_client" -G Ninja -DCMAKE_PREFIX_PATH="$P" >/dev/null
cmake --build "$work/c_client" >/dev/null
run_client "$work/c_client/anvil_c_client"
export PKG_CONFIG_PATH=$P/lib/pkgconfig
# shellcheck disable=SC2046  # pkg-config's flags are meant to split
"${CC:-cc}" -std=c11 -o "$work/c_client_pc" examples/c_client/main.c $(pkg-config --cflags --libs anvil) \
  -Wl,-rpath,"$(pkg-config --variable=libdir anvil)"
run_client "$work/c_client_pc"
say "examples/c_client (find_package and pkg-config): ok"

# A plugin author: the elementwise plugin through the installed conformance kit.
cmake -S examples/out_of_tree_plugin -B "$work/plugin" -G Ninja -DCMAKE_PREFIX_PATH="$P" >/dev/null
cmake --build "$work/plugin" >/dev/null
plugin=$work/plugin/libanvil_plugin_elementwise.so
bash scripts/check_exports.sh "$plugin" anvil_plugin_get_api >/dev/null
"$P/bin/anvil" conformance --plugin "$plugin" examples/out_of_tree_plugin/tests >"$work/log" 2>&1 ||
  fail "the plugin's conformance tests: $(cat "$work/log")"
(cd examples/out_of_tree_plugin &&
   "$P/bin/anvil" conformance --plugin "$plugin" --expected refused/expected.txt refused >"$work/log" 2>&1) ||
  fail "the plugin's refusals: $(cat "$work/log")"
# Its own tests (the same kit through Anvil::anvil_tool).
ctest --test-dir "$work/plugin" --output-on-failure >"$work/log" 2>&1 || fail "the plugin's ctest: $(cat "$work/log")"
# A refusal reaches a client as UNIMPLEMENTED.
if err=$("$work/c_client/anvil_c_client" --plugin "$plugin" examples/out_of_tree_plugin/refused/dot.hlo 2>&1); then
  fail "the plugin compiled a dot"
fi
grep -q "^compile: UNIMPLEMENTED: elementwise: line 6: op 'dot'" <<<"$err" || fail "refusing a dot: $err"
# Installed into the prefix, libanvil finds it by name.
cmake --install "$work/plugin" --prefix "$P" >/dev/null
err=$("$work/c_client/anvil_c_client" --plugin elementwise examples/c_client/program.hlo 2>&1) || true
grep -q "UNIMPLEMENTED: elementwise: .*op 'dot'" <<<"$err" || fail "the installed plugin, by name: $err"
say "examples/out_of_tree_plugin (conformance kit, refusals, found by name): ok"

# The PJRT plugin loads from the prefix (anvil_jax looks in \$ANVIL_PREFIX/lib).
if command -v python3 >/dev/null; then
  python3 -c "import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).GetPjrtApi; f.restype = ctypes.c_void_p; assert f()" \
    "$P/lib/libanvil_pjrt.so" || fail "lib/libanvil_pjrt.so does not load"
  say "lib/libanvil_pjrt.so loads: ok"
fi
