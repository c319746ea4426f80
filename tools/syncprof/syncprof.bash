# syncprof.bash - bash completion for syncprof (installed as
# share/bash-completion/completions/syncprof).
#
# Design: no list of commands, options or values is written here; each is
# read, when completing, from the syncprof being completed, so the
# completion cannot fall out of step with the tool:
#   commands     the "Commands:" list of 'syncprof --help';
#   subcommands  the "Usage:" lines of 'syncprof CMD --help'
#                ('syncprof trace dump FILE ...', 'syncprof ctl PID status|on');
#   options      every -x / --xxx that 'syncprof CMD [SUB] --help' names;
#   values       of -f/--format and -s/--sort: the "(valid: ...)" list of the
#                error that 'syncprof report' (or 'top') gives for a bad one;
#                of 'trace export --format': its "(known: ...)" list; of
#                run's other options with word values (--symbolize,
#                --trace-events, --report-signal): run's "(valid: ...)";
#   PIDs         of 'syncprof ctl' and 'top': 'syncprof ctl --list';
#   after 'run ... --': commands, then files.
# Costs: one or two runs of syncprof (a few ms) per Tab.  Needs nothing
# but bash (bash-completion's helpers are not used).

_syncprof_help_options() {
	"$@" --help 2>/dev/null | grep -oE -- '(^|[ ,[])--?[a-zA-Z][a-zA-Z-]*' |
		sed 's/^[ ,[]//' | sort -u
}

_syncprof_valid() {
	# $1: the syncprof binary, $2: the option, $3: the command, $4: its subcommand
	if [[ $3 == top ]]; then
		"$1" top 1 "$2" '?' 2>&1
	elif [[ $3 == trace ]]; then
		"$1" trace "$4" "$2" '?' /dev/null -o /dev/null 2>&1
	elif [[ $3 == run ]]; then
		"$1" run "$2" '?' -- true 2>&1
	else
		"$1" report "$2" '?' /dev/null 2>&1
	fi | sed -n 's/.*(\(valid\|known\): \([^)]*\)).*/\2/p' | tr -d ','
}

_syncprof() {
	local cur prev exe cmd sub i j words
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	exe=${COMP_WORDS[0]}
	cmd= sub=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		words=$("$exe" --help 2>/dev/null |
			sed -n '/^Commands:/,/^[^ ]/s/^  \([a-z][a-z-]*\) .*/\1/p')
		COMPREPLY=($(compgen -W "$words --help --version" -- "$cur"))
		return
	fi
	# 'syncprof run [OPTIONS] -- PROGRAM ...': after --, the program's words.
	if [[ $cmd == run ]]; then
		for ((j = i + 1; j < COMP_CWORD; j++)); do
			if [[ ${COMP_WORDS[j]} == -- ]]; then
				if ((j + 1 == COMP_CWORD)); then
					# a command in two PATH directories (/bin and
					# /usr/bin) is one word
					COMPREPLY=($(compgen -c -- "$cur" | sort -u))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return
			fi
		done
	fi
	[[ $cmd == trace ]] && sub=${COMP_WORDS[i + 1]}
	case $prev in
	-f | --format)
		COMPREPLY=($(compgen -W "$(_syncprof_valid "$exe" "$prev" "$cmd" "$sub")" -- "$cur"))
		return
		;;
	-s | --sort)
		COMPREPLY=($(compgen -W "$(_syncprof_valid "$exe" -s "$cmd")" -- "$cur"))
		return
		;;
	-o | --output | --trace | --src-root)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--*)
		# run's options with word values (--symbolize offline|inprocess)
		if [[ $cmd == run ]]; then
			words=$(_syncprof_valid "$exe" "$prev" run)
			if [[ -n $words ]]; then
				COMPREPLY=($(compgen -W "$words" -- "$cur"))
				return
			fi
		fi
		;;
	esac
	case $cmd in
	top)
		if ((COMP_CWORD == i + 1)) && [[ $cur != -* ]]; then
			words=$("$exe" ctl --list 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }')
			COMPREPLY=($(compgen -W "$words" -- "$cur"))
			return
		fi
		;;
	ctl)
		if ((COMP_CWORD == i + 1)); then
			words=$("$exe" ctl --list 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }')
			COMPREPLY=($(compgen -W "$words --list --help" -- "$cur"))
			return
		fi
		if ((COMP_CWORD == i + 2)); then
			words=$("$exe" ctl --help 2>/dev/null |
				sed -n 's/^Usage: syncprof ctl PID \([a-z|]*\).*/\1/p' | tr '|' ' ')
			COMPREPLY=($(compgen -W "$words" -- "$cur"))
			return
		fi
		;;
	*)
		# A command with subcommands: the words after "syncprof CMD" in its
		# usage lines.
		words=$("$exe" "$cmd" --help 2>/dev/null |
			sed -n "s/^\(Usage:\)\{0,1\} *syncprof $cmd \([a-z][a-z-]*\)\b.*/\2/p" | sort -u)
		if [[ -n $words ]]; then
			if ((COMP_CWORD == i + 1)); then
				COMPREPLY=($(compgen -W "$words --help" -- "$cur"))
				return
			fi
			sub=${COMP_WORDS[i + 1]}
		fi
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_syncprof_help_options "$exe" "$cmd" $sub)" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}

complete -F _syncprof syncprof
