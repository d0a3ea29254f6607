#!/bin/sh
# Builds a Kadu bundle written in AssemblyScript against this SDK (asc,
# pinned by the bundle's package-lock.json). Every AssemblyScript bundle's
# build.sh is a call of this script:
#
#   sh path/to/sdk/assemblyscript/tools/build.sh BUNDLE_DIR NAME [out.wasm]
#
# out.wasm defaults to NAME.wasm in BUNDLE_DIR; a relative out is relative to
# the current directory. The bundle's package.json depends on this SDK
# ("@kobana/kadu-sdk": "file:…"). The same source gives the same bytes from
# any checkout path.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: sh build.sh BUNDLE_DIR NAME [out.wasm]" >&2
	exit 2
fi
here=$(cd "$1" && pwd)
out=${3:-$here/$2.wasm}
case $out in /*) ;; *) out="$PWD/$out" ;; esac
cd "$here"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "build.sh: node and npm are missing: install Node.js >= 20 with npm >= 10 (AssemblyScript 0.28 needs them), e.g. apt-get install -y nodejs npm where the distribution has Node 20" >&2
	exit 1
fi
if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
	echo "build.sh: Node $(node --version) is too old: AssemblyScript 0.28 needs Node.js >= 20 (Debian bookworm's nodejs package is 18: use NodeSource's nodejs 20)" >&2
	exit 1
fi
if [ ! -d node_modules/assemblyscript ] || [ ! -e node_modules/@kobana/kadu-sdk/assembly ]; then
	npm ci --no-audit --no-fund >&2
fi
node node_modules/assemblyscript/bin/asc.js --config asconfig.json -o "$out"
