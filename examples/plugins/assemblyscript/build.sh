#!/bin/sh
# Builds the inbox bundle from source with AssemblyScript: sh build.sh
# [out.wasm], default inbox.wasm here. The SDK's tools/build.sh does the
# work, as for every AssemblyScript bundle; in a copy of this example, point
# it at your copy of sdk/assemblyscript (the one package.json depends on).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec sh "$here/../../../sdk/assemblyscript/tools/build.sh" "$here" inbox "$@"
