#!/bin/sh
# deb_lintian.sh BUILD_DIR - the .deb that 'cpack -G DEB' makes, checked
# by Debian's lintian: every E: tag fails, and so does every W: tag not in
# the allow list below (each with the reason it is left).  I: and P: tags
# are information and are not checked.
#
# Skipped (exit 77, the message says why) where cpack, dpkg-deb or lintian
# is missing: lintian is in .ci/packages.
#
# Cost: cpack about 15 s (it installs the tree and runs dpkg-shlibdeps),
# lintian about 9 s, on the 2-core CI machine.
. "$(dirname "$0")/lib.sh"
set -eu
build=$1

for t in cpack dpkg-deb lintian; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "deb_lintian: SKIP: no $t (apt-get install lintian: see .ci/packages)"
		exit 77
	fi
done


# The warnings left, one tag a line, with why:
allowed='
link-to-shared-library-in-wrong-package
package-name-doesnt-match-sonames
shared-library-lacks-version
pkg-config-unavailable-for-cross-compilation
maintscript-calls-ldconfig
'
# link-to-shared-library-in-wrong-package, package-name-doesnt-match-sonames:
#   one package carries the tool, the libraries and the development files
#   (headers, libsyncprof.so, .a, pkg-config and CMake files), not Debian's
#   split into libsyncprof0, libsyncprof-dev and syncprof; lintian's text
#   says a small package that does so may keep the link.
# shared-library-lacks-version: libsyncprof-preload.so is an LD_PRELOAD
#   object, loaded by path and never linked against, so it has no soname
#   version; policy would move it to /usr/lib/syncprof/, which changes the
#   path syncprof, syncprofConfig.cmake and users' LD_PRELOAD lines use.
# pkg-config-unavailable-for-cross-compilation: syncprof.pc is in
#   /usr/lib/pkgconfig, not the multiarch /usr/lib/x86_64-linux-gnu; the
#   package is built for the machine it runs on.
# maintscript-calls-ldconfig: CPack (3.25) writes postinst and postrm that
#   run ldconfig whenever a library lands in /usr/lib, and drops them only
#   for scripts of our own, which would be empty (maintainer-script-empty);
#   the package also has the ldconfig trigger lintian asks for.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$build" && cpack -G DEB -B "$tmp/deb" >"$tmp/cpack.log" 2>&1) ||
	die "cpack -G DEB: $(tail -n 20 "$tmp/cpack.log")"
deb=$(ls "$tmp"/deb/*.deb) || die "no .deb: $(ls "$tmp/deb")"

# lintian's exit status says only whether it ran (its --fail-on default,
# error, is what we check below, with the allow list for warnings).
# -L +classification adds the C: lines, facts about the package (its
# maintainer's address among them), which show lintian did read it.
lintian --tag-display-limit 0 --fail-on none -L +classification "$deb" \
	>"$tmp/lintian.out" 2>"$tmp/lintian.err" || die "lintian did not run: $(cat "$tmp/lintian.err")"
grep -v '^C:' "$tmp/lintian.out" || true

bad=0
while IFS= read -r line; do
	case $line in
	E:*) bad=1; echo "deb_lintian: error: $line" >&2 ;;
	W:*)
		tag=$(echo "$line" | awk '{print $3}')
		if ! echo "$allowed" | grep -qx -- "$tag"; then
			bad=1
			echo "deb_lintian: warning not allowed: $line" >&2
		fi
		;;
	esac
done <"$tmp/lintian.out"
[ "$bad" = 0 ] || die "lintian found the tags above"

grep -q '^C: syncprof: mail-contact Maintainer .*<dev@syncprof.invalid>' "$tmp/lintian.out" ||
	die "lintian did not read the package's maintainer: $(cat "$tmp/lintian.out")"
echo "deb_lintian: ok (no errors, $(grep -c '^W:' "$tmp/lintian.out") allowed warnings)"
