#!/bin/sh
# Builds the cashflow example bundle (Rust, sdk/rust) from source with cargo:
#
#   sh build.sh [out.wasm]      (default: cashflow.wasm in this directory)
#
# The SDK's tools/build.sh does the work, as for every Rust bundle; in a
# copy of this example, point sdk at your copy of sdk/rust (the same
# directory as Cargo.toml's kadu dependency).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sdk=$here/../../../sdk/rust
exec sh "$sdk/tools/build.sh" "$here" "$@"
