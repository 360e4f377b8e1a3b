#!/usr/bin/env bash
# build/initramfs.sh: the guest's initramfs (one static init and /dev/console),
# built with the kernel tree's own nolibc and usr/gen_init_cpio.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$(pristine_tree)
dir=$RCUWB_CACHE/initramfs
out=$dir/initramfs.cpio
mkdir -p "$dir"
key=$(cat "$top/VMs/init/init.c" "$0" "$tree/.rcuwb-debian" | sha256sum | cut -c1-16)
if [ -f "$out" ] && [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ]; then
	say "initramfs up to date ($out)"
	exit 0
fi
gcc -Os -static -nostdlib -fno-asynchronous-unwind-tables -fno-ident -s \
	-include "$tree/tools/include/nolibc/nolibc.h" \
	-o "$dir/init" "$top/VMs/init/init.c" -lgcc
gcc -O2 -o "$dir/gen_init_cpio" "$tree/usr/gen_init_cpio.c"
mkdir -p "$dir/sys"
cat > "$dir/initramfs.list" <<EOL
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /sys 0755 0 0
file /init $dir/init 0755 0 0
EOL
"$dir/gen_init_cpio" "$dir/initramfs.list" > "$out.new"
mv "$out.new" "$out"
echo "$key" > "$dir/.key"
say "initramfs built: $out ($(stat -c %s "$out") bytes, init $(stat -c %s "$dir/init") bytes)"
