# runner/fuzz/seeds.sh: seed_dirs NAME CORPUS copies the seed inputs of
# harness NAME into CORPUS: the shipped files of its kind and fuzz/seeds/NAME.
seed_dirs() {
	local name=$1 corpus=$2 f
	local -a files=()
	case $name in
	console | trace) files=("$top"/runner/tests/data/*.log) ;;
	matrix) files=("$top"/perf-configs/*.yaml) ;;
	schedule) files=("$top"/perf-configs/schedules/*.yaml) ;;
	hosts) files=("$top"/perf-configs/hosts/*.yaml) ;;
	variant) files=("$top"/kernel-changes/variants/*) ;;
	esac
	[ -d "$here/seeds/$name" ] && files+=("$here/seeds/$name"/*)
	for f in "${files[@]}"; do
		[ -f "$f" ] && cp -f "$f" "$corpus/seed-${f##*/}"
	done
	return 0
}
