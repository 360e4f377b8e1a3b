#!/usr/bin/env bash
# build/kernel.sh VARIANT [KCONFIG]: build the guest kernel of one kernel
# variant in one Kconfig scenario (default "tiny"; perf-configs/README.md).
#
#   1. the variant file (kernel-changes/variants/VARIANT, format in
#      kernel-changes/README.md) names a source and the patches on top:
#        source debian LINE [VERSION]   Debian's linux-source-LINE (default:
#                                       "debian 6.1", the installed package)
#        source git REPO REV            a commit, tag or branch of a git tree
#        series DIR                     where bare patch names are looked up
#                                       (default: the tree's line, e.g. 6.1)
#        NAME.patch                     one patch a line, in order
#   2. the build key: the source's content (Debian package version, or the
#      git tree id), the patches' hashes, the Kconfig fragments (base.config
#      and the scenario's scenarios/KCONFIG.config), this
#      recipe and the compiler.  A key that was built before is not built
#      again: the variant gets that build (0 s), whatever its (or the
#      scenario's) name.
#   3. source: a hard-linked copy of the Debian tree, or a clone of the git
#      repository checked out at the commit (only files that changed are
#      rewritten, so make recompiles only those), with the patches applied.
#      A patch that fails never leaves a half-patched tree; the message
#      names the patch and the failed hunk.
#   4. config: tinyconfig, then base.config, then scenarios/KCONFIG.config
#      (in $RCUWB_KCONFIG_DIR, default perf-configs/kconfig), merged with
#      the tree's scripts/kconfig/merge_config.sh, then every requested
#      option (and every "#CHECK#" line, as rcutorture does) is checked in
#      the final .config; the scenario's line for an option wins over
#      base.config's.
#   5. vmlinux built with ccache in the build tree of the source's line and
#      the scenario, shared by every variant (incremental; PVH direct boot:
#      no bzImage, no decompression), then published as
#      $RCUWB_CACHE/builds/KEY/{vmlinux,config,caps,build.json}.
#      caps: what the runner needs to know of the kernel (the mid-boot
#      probe, kernel/rcu/midboot_probe.c; rcuscale's parameter and console
#      prefixes: rcuscale/rcu-scale, or rcuperf/rcu-perf before 5.11;
#      whether rcuscale has the minruntime parameter, v6.6 or patch 0009).
#
# Layout: $RCUWB_CACHE/kernels/VARIANT/src, the variant's source, shared by
# its scenarios, and kernels/VARIANT/KCONFIG/build.json, naming the
# published build; work/LINE-KCONFIG/{src,out}, the build tree of a line
# (6.1, 6.12: the source's VERSION.PATCHLEVEL) in one scenario.  Before it
# builds, build/sync-tree.sh rewrites in work/.../src, with fresh mtimes,
# only the files whose content differs from the variant's source, so
# switching between variants of a line recompiles just what differs (a
# patch stack: seconds, not the minutes of a whole tree of ccache hits).  A
# lock (work/LINE-KCONFIG.lock) makes builds that share a tree wait their
# turn.  out/ sits beside src/ (../src), as kernels/VARIANT/out-KCONFIG did
# before, so ccache (base_dir = RCUWB_CACHE) hits across lines and
# scenarios for every file that is the same.  The build is reproducible:
# the same sources and config give the same vmlinux whatever the variant is
# called, where its tree came from, when it is built or what was built in
# the tree before it (build/tests/sources.sh checks this).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/.." && pwd)
variant=${1:?usage: kernel.sh VARIANT [KCONFIG]}
kconfig=${2:-tiny}
[[ $variant =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "bad variant name '$variant' (letters, digits, . _ -)"
[[ $kconfig =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ && $kconfig != src && $kconfig != out* ]] ||
	die "bad Kconfig scenario name '$kconfig' (letters, digits, . _ -; not src or out*)"
changes=${RCUWB_CHANGES:-$top/kernel-changes}
vfile=$changes/variants/$variant
[ -f "$vfile" ] || die "unknown variant '$variant': no file $vfile (see kernel-changes/README.md)"
kdir=${RCUWB_KCONFIG_DIR:-$top/perf-configs/kconfig}
frags=("$kdir/base.config" "$kdir/scenarios/$kconfig.config")
[ -r "${frags[0]}" ] || die "Kconfig fragment ${frags[0]} not found"
[ -r "${frags[1]}" ] || die "unknown Kconfig scenario '$kconfig': no file ${frags[1]} (there are: $(cd "$kdir/scenarios" 2>/dev/null && ls -- *.config 2>/dev/null | sed 's/\.config$//' | paste -sd' '))"

# 1. The variant file, read and checked by the runner: one grammar for
# everything that builds or boots a variant (runner/src/plan/variant.c;
# `rcuwb variant --shell` prints src_kind, deb_line, deb_pin, git_repo,
# git_rev, series, names and name_lines, single-quoted).  The runner that
# calls this script says where it is (RCUWB_BIN); else the checkout's, or
# an installed one (PREFIX/bin beside PREFIX/share/rcuwb).
rcuwb_bin=${RCUWB_BIN:-}
for c in "$top/runner/rcuwb" "$top/../../bin/rcuwb" "$(command -v rcuwb || :)"; do
	[ -n "$rcuwb_bin" ] && break
	[ -x "$c" ] && rcuwb_bin=$c
done
[ -n "$rcuwb_bin" ] || die "no rcuwb program to read $vfile with: build it first ('make runner')"
vars=$("$rcuwb_bin" variant --shell "$vfile" 2>/dev/null) ||
	die "$("$rcuwb_bin" variant "$vfile" 2>&1 | sed 's/^rcuwb: error: //')"
eval "$vars"
deb_line=${deb_line:-$RCUWB_DEFAULT_LINE}

# A git REPO: a URL is mirrored into the cache (fetched when REV is not a
# commit id), a bare name is $RCUWB_CACHE/git/NAME, a path is used as it is.
git_repo_dir() {
	local r=$1 m
	if [[ $r =~ ^[a-z][a-z0-9+.-]*:// || $r =~ ^[^/]+@[^/]+: ]]; then
		m=$RCUWB_CACHE/git/mirrors/$(printf '%s' "$r" | sha256sum | cut -c1-16)
		if [ ! -d "$m" ]; then
			say "mirroring $r into $m"
			git clone -q --mirror "$r" "$m.new" || die "$vfile: cannot clone $r"
			mv "$m.new" "$m"
		elif ! [[ $git_rev =~ ^[0-9a-f]{40}$ ]]; then
			git -C "$m" fetch -q --prune origin || die "$vfile: cannot fetch $r"
		fi
		echo "$m"
	elif [[ $r == */* ]]; then
		echo "$r"
	else
		echo "$RCUWB_CACHE/git/$r"
	fi
}

# 2. The source's identity and the build key.
case $src_kind in
debian)
	tree=$("$top/build/tree.sh" "$deb_line" ${deb_pin:+"$deb_pin"})
	deb_version=$(cut -d' ' -f2- "$tree/.rcuwb-debian")
	ver=$(tree_version "$tree")
	source_id="debian linux-source-$deb_line $deb_version"
	series=${series:-$deb_line} ;;
git)
	repo=$(git_repo_dir "$git_repo")
	if ! git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
		[[ $git_repo == */* ]] || die "$vfile: no git repository $repo (a bare name is a repository in \$RCUWB_CACHE/git; 'make tree-git' makes rcuwb-6.1)"
		die "$vfile: no git repository at $git_repo"
	fi
	commit=$(git -C "$repo" rev-parse -q --verify "$git_rev^{commit}") ||
		die "$vfile: $git_repo has no commit, tag or branch '$git_rev'"
	gtree=$(git -C "$repo" rev-parse "$commit^{tree}")
	ver=$(git -C "$repo" show "$commit:Makefile" | makefile_version) ||
		die "$vfile: cannot read the Makefile of $git_rev (${commit:0:12}) in $git_repo"
	source_id="git $gtree"
	series=${series:-${ver%.*}} ;;
esac

# Bare patch names live in the series directory of the tree's line (or the
# top of kernel-changes, the layout of rcuwb before several trees).
patches=()
for i in "${!names[@]}"; do
	p=${names[$i]}
	if [[ $p == */* ]]; then f=$changes/$p
	elif [ -f "$changes/$series/$p" ]; then f=$changes/$series/$p
	else f=$changes/$p
	fi
	[ -f "$f" ] || die "$vfile:${name_lines[$i]}: no patch $p in $changes/$series/"
	patches+=("$f")
done

build_key=$( { echo "rcuwb build 2"; echo "$source_id"
	for p in "${patches[@]}"; do sha256sum < "$p"; done
	cat "${frags[@]}" "$0" "$top/build/kconfig-check.sh"; gcc --version | head -n1; } |
	sha256sum | cut -c1-16)
kconfig_sha=$(cat "${frags[@]}" | sha256sum | cut -c1-16)
vdir=$RCUWB_CACHE/kernels/$variant
src=$vdir/src sdir=$vdir/$kconfig
wdir=$RCUWB_CACHE/work/${ver%.*}-$kconfig
wsrc=$wdir/src out=$wdir/out
bdir=$RCUWB_CACHE/builds/$build_key
what="$variant ($kconfig)"
mkdir -p "$sdir"
# Before scenarios: kernels/VARIANT/build.json was the tiny build's.
[ "$kconfig" != tiny ] || rm -f "$vdir/build.json"

json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')"; }

# build.json of this variant for the build in $bdir.
write_build_json() {
	local dest=$1 sep="" p k v
	{
		printf '{\n  "variant": %s,\n  "kernel_version": %s,\n' "$(json_str "$variant")" "$(json_str "$ver")"
		printf '  "kconfig": %s,\n  "kconfig_sha": "%s",\n' "$(json_str "$kconfig")" "$kconfig_sha"
		printf '  "build_key": "%s",\n' "$build_key"
		case $src_kind in
		debian) printf '  "source": {"kind": "debian", "package": "linux-source-%s", "version": %s},\n' \
				"$deb_line" "$(json_str "$deb_version")" ;;
		git) printf '  "source": {"kind": "git", "repo": %s, "rev": %s, "commit": "%s", "tree": "%s", "date": %s},\n' \
				"$(json_str "$git_repo")" "$(json_str "$git_rev")" "$commit" "$gtree" \
				"$(json_str "$(git -C "$repo" show -s --format=%cI "$commit")")" ;;
		esac
		printf '  "vmlinux": %s,\n  "config": %s,\n  "config_sha": "%s",\n' \
			"$(json_str "$bdir/vmlinux")" "$(json_str "$bdir/config")" "$(sha256sum < "$bdir/config" | cut -c1-16)"
		# caps: "midboot_probe true|false", "rcuscale_minruntime true|false",
		# "rcuscale_param P", "rcuscale_console C"
		while read -r k v; do
			case $k in midboot_probe | rcuscale_minruntime) printf '  "%s": %s,\n' "$k" "$v" ;;
			*) printf '  "%s": %s,\n' "$k" "$(json_str "$v")" ;; esac
		done < "$bdir/caps"
		printf '  "patches": ['
		for p in "${patches[@]}"; do
			printf '%s\n    {"name": %s, "sha256": "%s"}' "$sep" "$(json_str "${p##*/}")" "$(sha256sum < "$p" | cut -d' ' -f1)"
			sep=,
		done
		printf '\n  ]\n}\n'
	} > "$dest.new"
	mv "$dest.new" "$dest"
}

if [ -f "$bdir/vmlinux" ] && [ -f "$bdir/config" ] && [ -f "$bdir/caps" ]; then
	first=$(cat "$bdir/.variant" 2>/dev/null || echo "$what")
	write_build_json "$sdir/build.json"
	if [ "$first" = "$what" ]; then
		say "$what: kernel up to date (build $build_key: $bdir/vmlinux)"
	else
		say "$what: same content as $first (build $build_key): built in 0 s"
	fi
	exit 0
fi

# 3. The source tree.
src_key=$( { echo "$source_id"; for p in "${patches[@]}"; do sha256sum < "$p"; done; } | sha256sum | cut -c1-16)

files_of() { # files a patch touches
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$@" | sort -u
}

apply_patches() { # DIR: apply every patch; on failure print "patch: where" and return 1
	local d=$1 p msg where
	for p in "${patches[@]}"; do
		if ! msg=$(patch -d "$d" -p1 --fuzz=0 -N --no-backup-if-mismatch -r - < "$p" 2>&1); then
			# "patching file F" ... "Hunk #N FAILED at L." -> "F: Hunk #N FAILED at L"
			where=$(echo "$msg" | awk '/^patching file /{f=$3} /FAILED at|malformed|Reversed|can.t find/{sub(/\.$/, ""); print f ": " $0; exit}')
			echo "${p##*/} does not apply to Linux $ver: ${where:-$(echo "$msg" | head -n1)}"
			return 1
		fi
	done
}

prepare_debian() {
	say "$variant: preparing source (Linux $ver, $source_id, + ${#patches[@]} patches)"
	rm -rf "$src.new"
	cp -al "$tree" "$src.new"
	# Files the patches touch get their own inodes before any patch runs,
	# so the pristine tree is never written to.
	if [ ${#patches[@]} -gt 0 ]; then
		files_of "${patches[@]}" | while IFS= read -r f; do
			[ -f "$src.new/$f" ] || continue
			cp -p "$src.new/$f" "$src.new/$f.rcuwb-tmp"
			mv -f "$src.new/$f.rcuwb-tmp" "$src.new/$f"
		done
	fi
	if ! msg=$(apply_patches "$src.new"); then
		rm -rf "$src.new"
		refuse "$msg (no tree was changed; refresh the patch against the new tree)"
	fi
	# Files patched now or by the previous source get fresh mtimes so make
	# rebuilds them even where the content went back to pristine; all
	# other files stay hard links to the pristine tree.
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
}

# A clone of $repo that shares its objects, checked out at $commit: only
# files that differ from the last checkout are rewritten, so make recompiles
# just those.  A clone of another repository, or one that cannot check the
# commit out (its repository was rewritten), is made anew.  "git clean -x":
# the objects live in out-KCONFIG, so anything untracked in the source,
# ignored or not (Debian's .gitignore ignores every top-level path), is a
# leftover of earlier patches.
checkout_git() {
	local abs
	abs=$(cd "$repo" && pwd -P)
	if [ -d "$src/.git" ] && [ "$(cat "$src/.git/rcuwb-repo" 2>/dev/null)" = "$abs" ] &&
	   git -C "$src" checkout -q --detach -f "$commit" 2>/dev/null; then
		git -C "$src" clean -q -f -d -x
		return 0
	fi
	rm -rf "$src" "$src.new"
	git clone -q --shared --no-checkout "$abs" "$src.new" || die "$variant: cannot clone $repo"
	echo "$abs" > "$src.new/.git/rcuwb-repo"
	git -C "$src.new" checkout -q --detach -f "$commit" || die "$variant: cannot check out $commit of $repo"
	mv "$src.new" "$src"
}

prepare_git() {
	say "$variant: preparing source (Linux $ver, $git_repo $git_rev = ${commit:0:12}, + ${#patches[@]} patches)"
	rm -f "$src/.rcuwb-src"
	checkout_git
	if ! msg=$(apply_patches "$src"); then
		git -C "$src" checkout -q -f "$commit"
		git -C "$src" clean -q -f -d -x
		refuse "$msg (the source is back at ${commit:0:12}; refresh the patch)"
	fi
	echo "$src_key" > "$src/.rcuwb-src"
}

if [ "$(cat "$src/.rcuwb-src" 2>/dev/null)" != "$src_key" ]; then
	case $src_kind in
	debian) [ ! -d "$src/.git" ] || rm -rf "$src"; prepare_debian ;;
	git) prepare_git ;;
	esac
fi

# What the runner needs to know of this kernel, from the patched source.
write_caps() { # DEST
	local probe=false
	[ ! -f "$src/kernel/rcu/midboot_probe.c" ] || probe=true
	local minrt=false
	! grep -qs '^torture_param(int, minruntime,' "$src/kernel/rcu/rcuscale.c" || minrt=true
	{
		echo "midboot_probe $probe"
		echo "rcuscale_minruntime $minrt"
		if [ -f "$src/kernel/rcu/rcuscale.c" ]; then
			printf 'rcuscale_param rcuscale\nrcuscale_console rcu-scale\n'
		elif [ -f "$src/kernel/rcu/rcuperf.c" ]; then
			printf 'rcuscale_param rcuperf\nrcuscale_console rcu-perf\n'
		else
			die "$what: Linux $ver has neither kernel/rcu/rcuscale.c nor kernel/rcu/rcuperf.c: rcuwb cannot measure it"
		fi
	} > "$1"
}

# 4-5. Configure and build in the build tree of the line and scenario: one
# build at a time there; the tree synced to this variant's source.
mkdir -p "$out"
exec 9>"$wdir.lock"
flock 9
# A Debian tree starts as hard links to the pristine tree (never written:
# sync-tree replaces files, it does not write into them).
if [ ! -d "$wsrc" ] && [ "$src_kind" = debian ]; then cp -al "$tree" "$wsrc"; fi
say "$what: build tree $wdir: $("$top/build/sync-tree.sh" "$src" "$wsrc") from $src"
write_caps "$out/.rcuwb-caps"
export CCACHE_BASEDIR=$RCUWB_CACHE CCACHE_NOHASHDIR=1
# Reproducible: a fixed build time, user, host and number, and no "+" for
# a git tree (setlocalversion adds one unless LOCALVERSION is set).
export KBUILD_BUILD_TIMESTAMP=@0 KBUILD_BUILD_USER=rcuwb KBUILD_BUILD_HOST=rcuwb \
	KBUILD_BUILD_VERSION=1 LOCALVERSION=
kmake() { make -s -C "$wsrc" O="$out" ARCH=x86_64 CC="ccache gcc" "$@"; }
say "$what: configuring (tinyconfig + base.config + scenarios/$kconfig.config)"
kmake tinyconfig >"$out/.tinyconfig.log" 2>&1 || die "$what: make tinyconfig failed: see $out/.tinyconfig.log"
(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >"$out/.merge.log" 2>&1) ||
	die "$what: merge_config.sh failed: see $out/.merge.log"
kmake olddefconfig >"$out/.olddefconfig.log" 2>&1 || die "$what: olddefconfig failed: see $out/.olddefconfig.log"
bad=$("$top/build/kconfig-check.sh" "$out/.config" "${frags[@]}") ||
	die "$what: Kconfig options did not stick (a dependency is missing from the fragment?): $bad"

say "$what: building vmlinux with ccache (5-10 min cold on 2 cores, ~1 min warm)"
t0=$(date +%s)
kmake -j"$(nproc)" vmlinux
say "$what: built in $(( $(date +%s) - t0 )) s (build $build_key)"

rm -rf "$bdir.new"
mkdir -p "$bdir.new"
cp "$out/vmlinux" "$bdir.new/vmlinux"
cp "$out/.config" "$bdir.new/config"
cp "$out/.rcuwb-caps" "$bdir.new/caps"
echo "$what" > "$bdir.new/.variant"
rm -rf "$bdir"
mv "$bdir.new" "$bdir"
write_build_json "$bdir/build.json"
write_build_json "$sdir/build.json"
# The scenario's own objects of earlier rcuwb versions (the build tree holds them now).
rm -rf "$vdir/out-$kconfig" "$vdir/out"
