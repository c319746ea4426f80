# lib.sh - what the shell tests share (sourced first thing, before any cd:
# its path is found from $0): one way to say that a check failed.  Set
# TEST_NAME afterwards when the name in the messages is not the script's
# (locklib_waits.sh says "locklib_waits(std)").
#
#   fail MSG   a check failed: said, counted in $fails, and the test goes
#              on to its other checks (it exits with $fails at its end)
#   die MSG    a check failed after which nothing else can be checked:
#              said on stderr, exit 1
: "${TEST_NAME:=$(basename "$0" .sh)}"
fails=0
fail() { echo "$TEST_NAME: FAIL: $*"; fails=$((fails + 1)); }
die() { echo "$TEST_NAME: FAIL: $*" >&2; exit 1; }
