#!/usr/bin/env bash
# build/kernel.sh VARIANT: build the guest kernel of one kernel variant.
#
#   1. source: a hard-linked copy of the pristine tree with the variant's
#      patches (kernel-changes/variants/VARIANT) applied.  Patches go into a
#      scratch copy first, so a patch that fails never leaves a half-patched
#      tree; the message names the patch and the failed hunk.
#   2. config: tinyconfig + the fragments in RCUWB_KCONFIG (perf-configs/kconfig),
#      merged with the tree's scripts/kconfig/merge_config.sh, then every
#      requested option (and every "#CHECK#" line, as rcutorture does) is
#      checked in the final .config.
#   3. vmlinux built with ccache (PVH direct boot: no bzImage, no decompression).
#
# Layout: $RCUWB_CACHE/kernels/VARIANT/{src,out,build.json}.  Every variant's
# out/ sits at the same place relative to its src/, so ccache (base_dir =
# RCUWB_CACHE) hits across variants for every file a patch did not touch.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/.." && pwd)
variant=${1:?usage: kernel.sh VARIANT}
[[ $variant =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "bad variant name '$variant' (letters, digits, . _ -)"
changes=${RCUWB_CHANGES:-$top/kernel-changes}
vfile=$changes/variants/$variant
[ -f "$vfile" ] || die "unknown variant '$variant': no file $vfile (see kernel-changes/README.md)"
read -r -a frags <<< "${RCUWB_KCONFIG:-$top/perf-configs/kconfig/base.config}"
for f in "${frags[@]}"; do [ -r "$f" ] || die "Kconfig fragment $f not found"; done

tree=$(pristine_tree)
ver=$(tree_version "$tree")
vdir=$RCUWB_CACHE/kernels/$variant
src=$vdir/src out=$vdir/out
mkdir -p "$vdir"

# The patches of the variant, in order: one name a line, '#' comments.
patches=()
n=0
while IFS= read -r line || [ -n "$line" ]; do
	n=$((n + 1))
	line=${line%%#*}; line=${line//[[:space:]]/}
	[ -n "$line" ] || continue
	[ -f "$changes/$line" ] ||
		die "$vfile:$n: no patch $changes/$line"
	patches+=("$changes/$line")
done < "$vfile"

files_of() { # files a patch touches
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$@" | sort -u
}

src_key=$( { echo "$ver $(cat "$tree/.rcuwb-tarball")"; for p in "${patches[@]}"; do sha256sum < "$p"; done; } | sha256sum | cut -c1-16)
if [ "$(cat "$src/.rcuwb-src" 2>/dev/null)" != "$src_key" ]; then
	say "$variant: preparing source (Linux $ver + ${#patches[@]} patches)"
	rm -rf "$src.new"
	cp -al "$tree" "$src.new"
	for p in "${patches[@]}"; do
		if ! msg=$(patch -d "$src.new" -p1 --fuzz=0 -N --no-backup-if-mismatch -r - < "$p" 2>&1); then
			rm -rf "$src.new"
			# "patching file F" ... "Hunk #N FAILED at L." -> "F: Hunk #N FAILED at L"
			where=$(echo "$msg" | awk '/^patching file /{f=$3} /FAILED at|malformed|Reversed|can.t find/{sub(/\.$/, ""); print f ": " $0; exit}')
			die "${p##*/} does not apply to Linux $ver: ${where:-$(echo "$msg" | head -n1)} (no tree was changed; refresh the patch against the new tree)"
		fi
	done
	# Files patched now or by the previous source get fresh inodes (new
	# mtimes) so make rebuilds them even where the content went back to
	# pristine; all other files stay hard links to the pristine tree.
	{ cat "$src/.rcuwb-patched" 2>/dev/null || :; [ ${#patches[@]} -eq 0 ] || files_of "${patches[@]}"; } |
		sort -u | while IFS= read -r f; do
			[ -f "$src.new/$f" ] || continue
			cp -p --no-preserve=timestamps "$src.new/$f" "$src.new/$f.rcuwb-tmp"
			mv -f "$src.new/$f.rcuwb-tmp" "$src.new/$f"
		done
	if [ ${#patches[@]} -gt 0 ]; then files_of "${patches[@]}"; fi > "$src.new/.rcuwb-patched"
	echo "$src_key" > "$src.new/.rcuwb-src"
	rm -rf "$src"
	mv "$src.new" "$src"
fi

# Everything the kernel depends on; unchanged key + existing vmlinux = no work.
build_key=$( { echo "$src_key"; cat "${frags[@]}" "$0"; gcc --version | head -n1; } | sha256sum | cut -c1-16)
if [ "$(cat "$out/.rcuwb-build" 2>/dev/null)" = "$build_key" ] && [ -f "$out/vmlinux" ] && [ -f "$vdir/build.json" ]; then
	say "$variant: kernel up to date ($out/vmlinux)"
	exit 0
fi

mkdir -p "$out"
export CCACHE_BASEDIR=$RCUWB_CACHE CCACHE_NOHASHDIR=1
# Reproducible: the same sources and config give the same vmlinux whatever
# the variant is called or when it is built (the A/A test relies on it).
export KBUILD_BUILD_TIMESTAMP="@$(stat -c %Y "$RCUWB_TARBALL")" KBUILD_BUILD_USER=rcuwb \
	KBUILD_BUILD_HOST=rcuwb KBUILD_BUILD_VERSION=1
kmake() { make -s -C "$src" O="$out" ARCH=x86_64 CC="ccache gcc" "$@"; }
say "$variant: configuring (tinyconfig + ${frags[*]##*/})"
kmake tinyconfig >"$out/.tinyconfig.log" 2>&1 || die "$variant: make tinyconfig failed: see $out/.tinyconfig.log"
(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >"$out/.merge.log" 2>&1) || die "$variant: merge_config.sh failed: see $out/.merge.log"
kmake olddefconfig >"$out/.olddefconfig.log" 2>&1 || die "$variant: olddefconfig failed: see $out/.olddefconfig.log"
bad=$("$top/build/kconfig-check.sh" "$out/.config" "${frags[@]}") ||
	die "$variant: Kconfig options did not stick (a dependency is missing from the fragment?): $bad"

say "$variant: building vmlinux with ccache (5-10 min cold on 2 cores, ~1.5 min warm)"
t0=$(date +%s)
kmake -j"$(nproc)" vmlinux
say "$variant: built in $(( $(date +%s) - t0 )) s"

config_sha=$(sha256sum < "$out/.config" | cut -c1-16)
{
	printf '{\n  "variant": "%s",\n  "kernel_version": "%s",\n' "$variant" "$ver"
	printf '  "vmlinux": "%s",\n  "config": "%s",\n  "config_sha": "%s",\n' "$out/vmlinux" "$out/.config" "$config_sha"
	printf '  "patches": ['
	sep=
	for p in "${patches[@]}"; do
		printf '%s\n    {"name": "%s", "sha256": "%s"}' "$sep" "${p##*/}" "$(sha256sum < "$p" | cut -d' ' -f1)"
		sep=,
	done
	printf '\n  ]\n}\n'
} > "$vdir/build.json.new"
mv "$vdir/build.json.new" "$vdir/build.json"
echo "$build_key" > "$out/.rcuwb-build"
