#!/bin/sh
# A RUSTC_WRAPPER that makes cargo builds of a bundle reproducible across
# clone paths (operators pin bundles by sha256):
#
#   RUSTC_WRAPPER=path/to/rustc-wrapper.sh KADUSDK_REMAP="$sdk_dir=kadu" cargo build …
#
# - cargo derives each crate's `-C metadata` hash from, among others, the
#   absolute path of a path dependency outside the workspace (here: the
#   SDK). The hash seeds symbol names and so the order of functions in the
#   module. The wrapper pins it to the crate's name.
# - KADUSDK_REMAP ("FROM=TO") is passed as --remap-path-prefix, so that the
#   SDK's absolute path does not end up in panic messages. Passed here and
#   not in RUSTFLAGS, it stays out of cargo's own hashes too.
#
# Registry and git dependencies do not need it; it is harmless for them.
set -eu
rustc=$1
shift
crate=
prev=
for arg in "$@"; do
	[ "$prev" = --crate-name ] && crate=$arg
	prev=$arg
done
n=$#
for arg in "$@"; do
	case $arg in
	metadata=*) [ -n "$crate" ] && arg=metadata=$crate ;;
	esac
	set -- "$@" "$arg"
done
shift "$n"
exec "$rustc" "$@" ${KADUSDK_REMAP:+"--remap-path-prefix=$KADUSDK_REMAP"}
