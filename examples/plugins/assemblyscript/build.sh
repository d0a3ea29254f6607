#!/bin/sh
# Builds the inbox bundle from source with AssemblyScript (asc, pinned by
# package-lock.json): sh build.sh [out.wasm], default inbox.wasm here.
# The same source gives the same bytes from any checkout path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/inbox.wasm}
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
