# bash completion for clustersim: commands, each command's options, enum
# values of the options that take them, scenario files, the shipped
# scenarios' names and presets.
# Installed by meson into share/bash-completion/completions/clustersim.

_clustersim()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=${COMP_WORDS[1]}
	local commands="run validate coll memory pipeline sweep plan compare calibrate goodput list export-chakra run-chakra"

	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return 0
	fi
	case $prev in
	--format)
		case $cmd in
		run | compare | run-chakra) COMPREPLY=($(compgen -W "text json csv" -- "$cur")) ;;
		plan) COMPREPLY=($(compgen -W "text json csv megatron" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "text json" -- "$cur")) ;;
		esac
		return 0 ;;
	--op | --collective)
		if [ "$cmd" = coll ] && [ "$prev" = --op ]; then # nccl-tests' reduction
			COMPREPLY=($(compgen -W "sum prod max min avg mulsum all" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "all_reduce reduce_scatter all_gather all_to_all broadcast reduce gather scatter send_recv" -- "$cur"))
		fi
		return 0 ;;
	--algo) COMPREPLY=($(compgen -W "auto ring tree nvls nvls_tree hierarchical torus" -- "$cur")); return 0 ;;
	--proto) COMPREPLY=($(compgen -W "auto ll ll128 simple" -- "$cur")); return 0 ;;
	-d | --dtype | --datatype)
		COMPREPLY=($(compgen -W "float half bfloat16 double int8 uint8 int32 uint32 int64 uint64 f8e4m3 f8e5m2 all" -- "$cur"))
		return 0 ;;
	-o | --redop) COMPREPLY=($(compgen -W "sum prod max min avg mulsum all" -- "$cur")); return 0 ;;
	--gpu | --model)
		local kind=gpus
		[ "$prev" = --model ] && kind=models
		COMPREPLY=($(compgen -W "$(clustersim list $kind 2>/dev/null | tail -n +2 | cut -d' ' -f1)" -- "$cur"))
		return 0 ;;
	--schedule)
		COMPREPLY=($(compgen -W "gpipe 1f1b interleaved zb-h1 zb-v" -- "$cur"))
		return 0 ;;
	--out | --trace | --timeline | --per-rank | --plot | --nccl-tests | --cluster | --comm-groups | -J | --output_file)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0 ;;
	esac
	if [ "$cmd" = list ] && [ "$COMP_CWORD" -eq 2 ]; then
		COMPREPLY=($(compgen -W "gpus models scenarios" -- "$cur"))
		return 0
	fi
	if [[ $cur == -* ]]; then
		# the command's own options, read from its help
		local opts
		opts=$(clustersim "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9_-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return 0
	fi
	if [ "$cmd" = coll ] && [[ $cur != */* ]] && [[ $cur != *.* ]]; then
		# nccl-tests' binaries, as coll takes them, and files
		COMPREPLY=($(compgen -W "all_reduce_perf reduce_scatter_perf all_gather_perf alltoall_perf broadcast_perf sendrecv_perf reduce_perf gather_perf scatter_perf" -- "$cur"))
		[ ${#COMPREPLY[@]} -gt 0 ] && return 0
	fi
	case $cmd in
	run | validate | memory | sweep | plan | goodput | export-chakra)
		# the shipped scenarios by name (the file each is read from ends the line)
		if [[ $cur != */* ]]; then
			local names
			names=$(clustersim list scenarios 2>/dev/null | tail -n +2 | awk '{ n = $NF; sub(/.*\//, "", n); sub(/\.yaml$/, "", n); print n }')
			COMPREPLY=($(compgen -W "$names" -- "$cur"))
		fi ;;
	esac
	COMPREPLY+=($(compgen -f -- "$cur"))
}
complete -F _clustersim clustersim
