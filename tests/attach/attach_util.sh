# attach_util.sh - shared by the attach tests (sourced, not run).
#
# attach_can_ptrace: exits 77 (CTest: skipped) with the reason when this
# environment does not let a process trace a process that is not its
# child: Yama's ptrace_scope, or no ptrace at all (a seccomp policy).

fail() { echo "FAIL: $*" >&2; exit 1; }

attach_can_ptrace() {
	scope=0
	[ -r /proc/sys/kernel/yama/ptrace_scope ] && scope=$(cat /proc/sys/kernel/yama/ptrace_scope)
	cap=0
	eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
	[ -n "$eff" ] && [ $(( (0x$eff >> 19) & 1 )) = 1 ] && cap=1
	if [ "$scope" = 3 ]; then
		echo "SKIP: kernel.yama.ptrace_scope is 3: no process may be traced"; exit 77
	fi
	if [ "$cap" = 0 ] && [ "$scope" != 0 ]; then
		echo "SKIP: kernel.yama.ptrace_scope is $scope and this user has no CAP_SYS_PTRACE:"
		echo "      attach cannot trace a process that is not its child here"; exit 77
	fi
}

# attach_skip_if_refused FILE: the attach's stderr says ptrace was refused.
attach_skip_if_refused() {
	if grep -q "ptrace was refused" "$1"; then
		echo "SKIP: ptrace is not permitted in this environment:"; cat "$1"; exit 77
	fi
}

# proc_state PID: the state letter of /proc/PID/stat (R, S, T, t, Z...).
proc_state() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1
}

# not_stopped PID: fail when the process is left stopped or traced.
not_stopped() {
	st=$(proc_state "$1")
	case "$st" in T|t) fail "process $1 left stopped (state $st)";; esac
	tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status")
	[ "$tracer" = 0 ] || fail "process $1 left traced by $tracer"
}
