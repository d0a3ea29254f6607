#!/bin/sh
# Builds the failures example bundle (Go, sdk/go) from source:
#
#   sh build.sh [out.wasm]      (default: failures.wasm here)
#
# Needs Go 1.25 or later. The bundle needs nothing but the standard library
# and github.com/kobana/kadu/sdk/go; -trimpath keeps clone paths out of the
# bytes.
set -eu

out=${1:-failures.wasm}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
cd "$(dirname "$0")"

GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -trimpath -buildvcs=false -buildmode=c-shared -o "$out" .
