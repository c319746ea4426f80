#!/bin/sh
# deps.sh - make sure the Debian packages listed in .ci/packages are there.
# As root: installs the missing ones with apt-get.  Otherwise: names them,
# with the command to run, and fails.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
want=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/.ci/packages")
missing=""
for p in $want; do
	# A package counts as there when dpkg knows it installed.
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "syncprof: installing Debian packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || apt-get update
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null || \
		apt-get install -y --no-install-recommends $missing
else
	echo "syncprof: missing Debian packages:$missing" >&2
	echo "syncprof: install them with: sudo apt-get install$missing" >&2
	exit 1
fi
