#!/bin/sh
# Builds a Kadu bundle written in C against this SDK. Every C bundle's
# build.sh is a call of this script, from the bundle's directory:
#
#   sh path/to/sdk/c/tools/build.sh OUT.wasm SDK_DIR SOURCE.c...
#
# OUT.wasm is an absolute path; SDK_DIR is this SDK's directory as seen from
# the bundle's (e.g. ../../../sdk/c), given relative so that the same sources
# give the same bytes from any clone path. Needs clang, lld and wasi-libc
# (Debian/Ubuntu: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32).
set -eu

if [ $# -lt 3 ]; then
	echo "usage: sh build.sh OUT.wasm SDK_DIR SOURCE.c..." >&2
	exit 2
fi
out=$1
sdk=$2
shift 2

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
	-I "$sdk" -o "$out" "$@" "$sdk"/kadu*.c
