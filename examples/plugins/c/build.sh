#!/bin/sh
# Builds the webhook_health example bundle (C, sdk/c) from source:
#
#   sh build.sh [out.wasm]      (default: webhook_health.wasm here)
#
# Needs clang, lld and wasi-libc (Debian/Ubuntu: apt-get install clang lld
# wasi-libc libclang-rt-dev-wasm32). The same sources give the same bytes on
# any clone path: no debug info, no absolute paths.
set -eu

out=${1:-webhook_health.wasm}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
cd "$(dirname "$0")"

# The SDK's sources are kadu*.c. Link order is part of the bytes, so the glob
# must sort the same for everyone: bytewise, as in the C locale.
LC_ALL=C
export LC_ALL

CC=${CC:-clang}
install="apt-get install clang lld wasi-libc libclang-rt-dev-wasm32"
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "build.sh: $CC is not installed: $install" >&2
	exit 1
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <stdio.h>\n__attribute__((export_name("f"))) int f(void) { return snprintf(0, 0, "%%d", 1); }\n' >"$probe/p.c"
if ! "$CC" --target=wasm32-wasi -mexec-model=reactor -o "$probe/p.wasm" "$probe/p.c" 2>"$probe/err"; then
	echo "build.sh: $CC cannot build for wasm32-wasi (missing wasi-libc, lld or libclang-rt-dev-wasm32?): $install" >&2
	cat "$probe/err" >&2
	exit 1
fi

"$CC" --target=wasm32-wasi -mexec-model=reactor -std=c11 -O2 -Wall -Wextra \
	-ffile-prefix-map="$(pwd)"=. \
	-Wl,--stack-first -Wl,-z,stack-size=131072 -Wl,--strip-debug \
	-I ../../../sdk/c -o "$out" main.c ../../../sdk/c/kadu*.c
