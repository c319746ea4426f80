# common.sh - what the bench scripts share: the figures they print, and
# ending the processes they started; sourced
# (". \"$(dirname \"$0\")/common.sh\"") before the script changes directory.

# The median of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# summarize "RUNS" "BARE_RUNS": one mode's runs against bare's, both
# space-separated and in the same round order.  Sets med, lo, hi (the
# spread), ratio (of the medians) and per (" r1 r2 ...", each round's
# run over that round's bare one, three decimals).
summarize() {
	local -a v b
	local i base
	read -ra v <<< "$1"
	read -ra b <<< "$2"
	med=$(printf '%s\n' "${v[@]}" | median)
	lo=$(printf '%s\n' "${v[@]}" | sort -g | head -1)
	hi=$(printf '%s\n' "${v[@]}" | sort -g | tail -1)
	base=$(printf '%s\n' "${b[@]}" | median)
	ratio=$(awk -v a="$med" -v b="$base" 'BEGIN { print a / b }')
	per=
	for i in "${!v[@]}"; do
		per="$per $(awk -v a="${v[$i]}" -v b="${b[$i]}" 'BEGIN { printf "%.3f", a / b }')"
	done
}

# end_process PID: SIGTERM, a second to go, then SIGKILL; never fails (the
# scripts' cleanup traps run under set -e).
end_process() {
	kill -TERM "$1" 2> /dev/null && sleep 1 || :
	kill -KILL "$1" 2> /dev/null || :
}
