#!/bin/sh
# Builds the webhook_health example bundle (C, sdk/c) from source:
#
#   sh build.sh [out.wasm]      (default: webhook_health.wasm here)
#
# The SDK's tools/build.sh does the work, as for every C bundle; in a copy of
# this example, point it at your copy of sdk/c. Needs clang, lld and
# wasi-libc (Debian/Ubuntu: apt-get install clang lld wasi-libc
# libclang-rt-dev-wasm32). The same sources give the same bytes on any clone
# path: no debug info, no absolute paths.
set -eu

out=${1:-webhook_health.wasm}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
cd "$(dirname "$0")"
exec sh ../../../sdk/c/tools/build.sh "$out" ../../../sdk/c main.c
