# stats.sh - the figures the bench scripts print, in one place; sourced
# (". \"$(dirname \"$0\")/stats.sh\"") before the script changes directory.

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
