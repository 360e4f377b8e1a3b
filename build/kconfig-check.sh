#!/usr/bin/env bash
# build/kconfig-check.sh CONFIG FRAGMENT...: every option the fragments ask
# for (CONFIG_X=v, CONFIG_X=n, "# CONFIG_X is not set", "#CHECK#CONFIG_X=v")
# must hold in CONFIG.  Fragments apply in order, as merge_config.sh applies
# them: a later fragment's line for an option replaces an earlier one's (a
# scenario overrides base.config).  Prints the ones that do not hold, each
# with the file and line that asked for it, and exits 1.
set -euo pipefail
config=$1; shift
awk '
FNR == NR { if ($0 ~ /^CONFIG_/) { split($0, kv, "="); have[kv[1]] = substr($0, length(kv[1]) + 2) }
	    else if ($0 ~ /^# CONFIG_.* is not set/) have[$2] = "n"
	    next }
{ line = $0; sub(/^#CHECK#/, "", line) }
line ~ /^CONFIG_[A-Za-z0-9_]+=/ { split(line, kv, "="); want = substr(line, length(kv[1]) + 2); opt = kv[1] }
line ~ /^# CONFIG_[A-Za-z0-9_]+ is not set/ { split(line, w, " "); opt = w[2]; want = "n" }
opt != "" {
	if (!(opt in wanted)) order[++n] = opt
	wanted[opt] = want; where[opt] = FILENAME ":" FNR
	opt = ""
}
END {
	for (i = 1; i <= n; i++) {
		opt = order[i]
		got = (opt in have) ? have[opt] : "n"
		if (got != wanted[opt]) { printf "%s%s=%s (got %s, %s)", sep, opt, wanted[opt], got, where[opt]; sep = "; "; bad = 1 }
	}
	if (bad) { print ""; exit 1 }
}
' "$config" "$@"
