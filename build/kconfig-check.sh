#!/usr/bin/env bash
# build/kconfig-check.sh CONFIG FRAGMENT...: every option a fragment asks for
# (CONFIG_X=v, CONFIG_X=n, "# CONFIG_X is not set", "#CHECK#CONFIG_X=v") must
# hold in CONFIG.  Prints the ones that do not and exits 1.
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
	got = (opt in have) ? have[opt] : "n"
	if (got != want) { printf "%s%s=%s (got %s, %s:%d)", sep, opt, want, got, FILENAME, FNR; sep = "; "; bad = 1 }
	opt = ""
}
END { if (bad) { print ""; exit 1 } }
' "$config" "$@"
