#!/bin/bash
# scripts/deps.sh - install the Debian packages pems needs (idempotent).
#
#   bash scripts/deps.sh           build + test dependencies
#   bash scripts/deps.sh --bench   also the benchmark peers and tools
#
# Checks every package with dpkg-query first; only if something is missing
# does it run `apt-get update` and install the missing ones, so it is a fast
# no-op on a provisioned machine.  Needs no stdin (CI=true, no tty).
set -euo pipefail

BUILD_PKGS=(build-essential pkg-config liburing-dev libaio-dev
	    libopenmpi-dev openmpi-bin libzstd-dev check time)
BENCH_PKGS=(fio libstxxl-dev g++ gnuplot-nox sqlite3 coreutils linux-perf e2fsprogs)

want=("${BUILD_PKGS[@]}")
for arg in "$@"; do
	case "$arg" in
	--bench) want+=("${BENCH_PKGS[@]}") ;;
	-h|--help)
		echo "usage: $0 [--bench]"
		exit 0 ;;
	*)
		echo "deps.sh: error: unknown option '$arg'; use --bench or --help" >&2
		exit 2 ;;
	esac
done

installed() {
	local st
	st=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
	[[ "$st" == "install ok installed" ]]
}

missing=()
for p in "${want[@]}"; do
	installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
	exit 0
fi

echo "deps.sh: installing missing packages: ${missing[*]}"
SUDO=()
if ((EUID != 0)); then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo -n)
	else
		echo "deps.sh: error: missing packages (${missing[*]}) and not root;" \
		     "install them or rerun as root" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef
	  -o Dpkg::Options::=--force-confold)
"${SUDO[@]}" apt-get -q -o DPkg::Lock::Timeout=300 update </dev/null
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install "${APT_OPTS[@]}" "${missing[@]}" </dev/null

still=()
for p in "${missing[@]}"; do
	installed "$p" || still+=("$p")
done
if ((${#still[@]})); then
	echo "deps.sh: error: still missing after apt-get install: ${still[*]}" >&2
	exit 1
fi
echo "deps.sh: done"
