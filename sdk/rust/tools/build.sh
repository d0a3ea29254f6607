#!/bin/sh
# Builds a Kadu bundle crate (a cdylib depending on this SDK) from source
# with cargo. Every Rust bundle's build.sh is a call of this script:
#
#   sh path/to/sdk/rust/tools/build.sh CRATE_DIR [out.wasm]
#
# out.wasm defaults to <crate name>.wasm in CRATE_DIR; a relative out is
# relative to the current directory. Debian's rustc and cargo (apt-get
# install rustc cargo libstd-rust-dev-wasm32) are preferred when present:
# rustup's, often first on PATH, may lack the WASI target. The same sources
# and toolchain give the same bytes on any clone path (rustc-wrapper.sh
# beside this script says how).
set -eu

if [ $# -lt 1 ]; then
	echo "usage: sh build.sh CRATE_DIR [out.wasm]" >&2
	exit 2
fi
sdk=$(cd "$(dirname "$0")/.." && pwd)
crate=$(cd "$1" && pwd)
out=${2:-}
case $out in "") ;; /*) ;; *) out=$PWD/$out ;; esac
cd "$crate"
# The crate's name: the first `name = "…"` of Cargo.toml, its [package]'s.
name=$(sed -n 's/^name *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
if [ -z "$name" ]; then
	echo "build.sh: no package name in $crate/Cargo.toml" >&2
	exit 1
fi
[ -n "$out" ] || out=$crate/$name.wasm

if [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; then
	CARGO=${CARGO:-/usr/bin/cargo}
	RUSTC=${RUSTC:-/usr/bin/rustc}
else
	CARGO=${CARGO:-cargo}
	RUSTC=${RUSTC:-rustc}
fi
if ! command -v "$CARGO" >/dev/null 2>&1 || ! command -v "$RUSTC" >/dev/null 2>&1; then
	echo "build.sh: Rust is not installed (no cargo or rustc). Install it with:" >&2
	echo "  sudo apt-get install rustc cargo libstd-rust-dev-wasm32" >&2
	echo "or with rustup (https://rustup.rs), then: rustup target add wasm32-wasip1" >&2
	exit 1
fi
sysroot=$("$RUSTC" --print sysroot)
if [ -d "$sysroot/lib/rustlib/wasm32-wasi" ]; then
	target=wasm32-wasi
elif [ -d "$sysroot/lib/rustlib/wasm32-wasip1" ]; then
	target=wasm32-wasip1
else
	echo "build.sh: $RUSTC has no WebAssembly (WASI) standard library. Install it with:" >&2
	echo "  sudo apt-get install libstd-rust-dev-wasm32    (Debian's rustc)" >&2
	echo "  rustup target add wasm32-wasip1                (rustup's rustc)" >&2
	exit 1
fi

# A copy, so that a checkout that lost the executable bit still builds.
mkdir -p target
# Replaced atomically: another build of this directory may be running it.
cp "$sdk/tools/rustc-wrapper.sh" "target/rustc-wrapper.sh.$$"
chmod +x "target/rustc-wrapper.sh.$$"
mv -f "target/rustc-wrapper.sh.$$" target/rustc-wrapper.sh
RUSTC_WRAPPER=$PWD/target/rustc-wrapper.sh
KADUSDK_REMAP=$sdk=kadu
export RUSTC RUSTC_WRAPPER KADUSDK_REMAP
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_BUILD_RUSTFLAGS

"$CARGO" build --quiet --offline --locked --release --target "$target"
cp "target/$target/release/$name.wasm" "$out"
