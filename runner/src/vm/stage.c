/*
 * stage.c: a guest's kernel and initramfs, where its QEMU can read them.
 *
 * On the local host QEMU runs as libvirt-qemu, which cannot reach a kernel
 * under /root/.cache, so each guest gets copies in a directory libvirt owns
 * for its life.  A remote host shares nothing with the runner but the
 * libvirt connection: the files travel as storage volumes, once per
 * content, and stay in the host's pool for the next guests and runners.
 */
#define _GNU_SOURCE
#include "stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libvirt/virterror.h>
#include <openssl/evp.h>

#include "common.h"

#define POOL_NAME "rcuwb"

static const char *stage_root(void)
{
	const char *e = getenv("RCUWB_STAGE");

	return e && *e ? e : "/var/lib/libvirt/rcuwb";
}

int stage_local(const char *name, const char *vmlinux, const char *initramfs, char *dir, size_t dcap,
		char *kernel, char *initrd, char *console, size_t cap)
{
	if (path_fmt(dir, dcap, "%s/%s", stage_root(), name) || mkdir_p(dir) < 0 ||
	    path_fmt(kernel, cap, "%s/vmlinux", dir) || path_fmt(initrd, cap, "%s/initramfs.cpio", dir) ||
	    path_fmt(console, cap, "%s/console.log", dir))
		return -1;
	if (copy_file(vmlinux, kernel) < 0 || copy_file(initramfs, initrd) < 0)
		return -1;
	return 0;
}

void stage_local_remove(const char *dir)
{
	char path[PATH_MAX + 32];
	static const char *const files[] = { "vmlinux", "initramfs.cpio", "console.log" };
	size_t i;

	if (!dir[0])
		return;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	for (i = 0; i < 10; i++) {	/* virtlogd's rotations of a large console */
		snprintf(path, sizeof(path), "%s/console.log.%zu", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

bool stage_orphaned(const char *name)
{
	int pid = 0;

	if (sscanf(name, "rcuwb-%*d-%*d-%d-", &pid) != 1 || pid <= 0)
		return false;
	return kill(pid, 0) < 0 && errno == ESRCH;
}

static void destroy_named(virConnectPtr conn, const char *name)
{
	virDomainPtr dom = virDomainLookupByName(conn, name);

	if (!dom)
		return;
	info("rcuwb: destroying %s, left by a runner that was killed\n", name);
	virDomainDestroy(dom);
	virDomainFree(dom);
}

void stage_local_clean_stale(struct hypervisor *hv)
{
	DIR *d = opendir(stage_root());
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char dir[PATH_MAX];

		if (strncmp(e->d_name, "rcuwb-", 6) || !stage_orphaned(e->d_name))
			continue;
		/*
		 * A runner killed while libvirt was still starting its guest can
		 * leave that guest behind (autodestroy is attached too late).
		 */
		destroy_named(hv->conn, e->d_name);
		snprintf(dir, sizeof(dir), "%s/%.200s", stage_root(), e->d_name);
		stage_local_remove(dir);
	}
	closedir(d);
}

/* A guest of that name runs on the host (another machine's runner may share a pid with a dead one here). */
static bool guest_alive(virConnectPtr conn, const char *log)
{
	char name[128];
	virDomainPtr dom;
	bool alive;

	snprintf(name, sizeof(name), "%.*s", (int)(strlen(log) - 12), log);
	dom = virDomainLookupByName(conn, name);
	alive = dom && virDomainIsActive(dom) == 1;
	if (dom)
		virDomainFree(dom);
	return alive;
}

/* Console logs of runners that are gone, in the pool. */
static void clean_stale_logs(virConnectPtr conn)
{
	virStoragePoolPtr pool = virStoragePoolLookupByName(conn, POOL_NAME);
	virStorageVolPtr *vols = NULL;
	int i, n;

	if (!pool)
		return;
	virStoragePoolRefresh(pool, 0);
	n = virStoragePoolListAllVolumes(pool, &vols, 0);
	for (i = 0; i < n; i++) {
		const char *name = virStorageVolGetName(vols[i]);
		size_t len = name ? strlen(name) : 0;

		if (len > 12 && !strcmp(name + len - 12, ".console.log") && !strncmp(name, "rcuwb-", 6) &&
		    stage_orphaned(name) && !guest_alive(conn, name))
			virStorageVolDelete(vols[i], 0);
		virStorageVolFree(vols[i]);
	}
	free(vols);
	virStoragePoolFree(pool);
}

void stage_owner(char *out, size_t cap)
{
	char host[256] = "?";

	if (gethostname(host, sizeof(host) - 1) < 0)
		strcpy(host, "?");
	snprintf(out, cap, "rcuwb runner on %s", host);
}

/*
 * Started by a runner of this machine (its description says so): a name's
 * pid means something only here.  Another machine's runner may share the
 * host with a live guest of the same pid.
 */
static bool ours(virDomainPtr dom)
{
	char want[300];
	char *d = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_DESCRIPTION, NULL, 0);
	bool mine;

	stage_owner(want, sizeof(want));
	mine = d && !strncmp(d, want, strlen(want));
	free(d);
	return mine;
}

void stage_remote_clean_stale(virConnectPtr conn)
{
	virDomainPtr *doms = NULL;
	int i, n = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);

	for (i = 0; i < n; i++) {
		const char *name = virDomainGetName(doms[i]);

		if (name && !strncmp(name, "rcuwb-", 6) && stage_orphaned(name) && ours(doms[i])) {
			info("rcuwb: destroying %s, left by a runner that was killed\n", name);
			virDomainDestroy(doms[i]);
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	clean_stale_logs(conn);
}

/* The first 16 hex digits of the file's SHA-256 (enough to tell kernels apart). */
static int hash_file(const char *file, char out[17], long long *size)
{
	unsigned char md[EVP_MAX_MD_SIZE], chunk[65536];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned mdlen = 0, i;
	int fd = open(file, O_RDONLY | O_CLOEXEC), ret = 0;
	ssize_t n;

	*size = 0;
	if (fd < 0 || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		ret = set_err("cannot hash %s: %s", file, fd < 0 ? strerror(errno) : "no SHA-256");
		goto out;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		EVP_DigestUpdate(ctx, chunk, (size_t)n);
		*size += n;
	}
	if (n < 0 || !EVP_DigestFinal_ex(ctx, md, &mdlen)) {
		ret = set_err("cannot read %s: %s", file, strerror(errno));
		goto out;
	}
	for (i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
out:
	EVP_MD_CTX_free(ctx);
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * The same, remembered per path, size and mtime: every remote run stages
 * the same few files, which are read whole only the first time.
 */
static int file_hash(const char *file, char out[17], long long *size)
{
	static struct {
		char path[PATH_MAX], hash[17];
		long long size;
		struct timespec mtime;
	} cache[16];
	static unsigned next;
	struct stat st;
	unsigned i;

	if (stat(file, &st) < 0)
		return set_err("cannot hash %s: %s", file, strerror(errno));
	for (i = 0; i < ARRAY_SIZE(cache); i++)
		if (!strcmp(cache[i].path, file) && cache[i].size == (long long)st.st_size &&
		    cache[i].mtime.tv_sec == st.st_mtim.tv_sec && cache[i].mtime.tv_nsec == st.st_mtim.tv_nsec) {
			memcpy(out, cache[i].hash, 17);
			*size = cache[i].size;
			return 0;
		}
	if (hash_file(file, out, size) < 0)
		return -1;
	i = next++ % ARRAY_SIZE(cache);
	snprintf(cache[i].path, sizeof(cache[i].path), "%s", file);
	memcpy(cache[i].hash, out, 17);
	cache[i].size = *size;
	cache[i].mtime = st.st_mtim;
	return 0;
}

/* The pool, active; created (transient, its directory built) when the host has none. */
static virStoragePoolPtr get_pool(virConnectPtr conn, const char *dir)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(conn, POOL_NAME);
	char xml[1024];

	if (p) {
		if (virStoragePoolIsActive(p) != 1 && virStoragePoolCreate(p, 0) < 0) {
			set_err("libvirt: storage pool %s: %s", POOL_NAME, hv_err());
			virStoragePoolFree(p);
			return NULL;
		}
		return p;
	}
	snprintf(xml, sizeof(xml), "<pool type='dir'><name>%s</name><target><path>%s</path>"
		 "<permissions><mode>0755</mode></permissions></target></pool>", POOL_NAME, dir);
	p = virStoragePoolCreateXML(conn, xml, VIR_STORAGE_POOL_CREATE_WITH_BUILD);
	if (!p)	/* another runner may have made it meanwhile */
		p = virStoragePoolLookupByName(conn, POOL_NAME);
	if (!p)
		set_err("libvirt: cannot make storage pool %s at %s: %s", POOL_NAME, dir, hv_err());
	return p;
}

static int send_file(virStreamPtr st, char *data, size_t n, void *opaque)
{
	(void)st;
	return (int)read(*(int *)opaque, data, n);
}

static virStorageVolPtr new_vol(virStoragePoolPtr pool, const char *name, long long size)
{
	char xml[512];

	snprintf(xml, sizeof(xml), "<volume><name>%s</name><capacity unit='bytes'>%lld</capacity>"
		 "<target><format type='raw'/><permissions><mode>0644</mode></permissions></target>"
		 "</volume>", name, size);
	return virStorageVolCreateXML(pool, xml, 0);
}

static void delete_vol(virStoragePoolPtr pool, const char *name)
{
	virStorageVolPtr v = virStorageVolLookupByName(pool, name);

	if (v) {
		virStorageVolDelete(v, 0);
		virStorageVolFree(v);
	}
}

static int upload(virConnectPtr conn, virStorageVolPtr vol, const char *file, long long size)
{
	virStreamPtr st = virStreamNew(conn, 0);
	int fd = open(file, O_RDONLY | O_CLOEXEC), ret = -1;

	if (!st || fd < 0) {
		set_err("cannot upload %s: %s", file, fd < 0 ? strerror(errno) : hv_err());
		goto out;
	}
	if (virStorageVolUpload(vol, st, 0, (unsigned long long)size, 0) < 0 ||
	    virStreamSendAll(st, send_file, &fd) < 0 || virStreamFinish(st) < 0) {
		set_err("libvirt: uploading %s: %s", file, hv_err());
		virStreamAbort(st);
		goto out;
	}
	ret = 0;
out:
	if (st)
		virStreamFree(st);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* The volume, uploaded when missing or unfinished (no marker). */
static virStorageVolPtr ensure_vol(virConnectPtr conn, virStoragePoolPtr pool, const char *name,
				   const char *file, long long size)
{
	char marker[128], *uri;
	virStorageVolPtr vol, ok;

	snprintf(marker, sizeof(marker), "%s.ok", name);
	vol = virStorageVolLookupByName(pool, name);
	ok = virStorageVolLookupByName(pool, marker);
	if (!vol || !ok) {	/* another runner may have uploaded it since the pool was read */
		if (vol)
			virStorageVolFree(vol);
		if (ok)
			virStorageVolFree(ok);
		virStoragePoolRefresh(pool, 0);
		vol = virStorageVolLookupByName(pool, name);
		ok = virStorageVolLookupByName(pool, marker);
	}
	if (vol && ok) {
		virStorageVolFree(ok);
		return vol;
	}
	if (vol)
		virStorageVolFree(vol);
	if (ok)
		virStorageVolFree(ok);
	delete_vol(pool, name);
	delete_vol(pool, marker);
	uri = virConnectGetURI(conn);
	info("rcuwb: uploading %s to %s as volume %s/%s (%lld bytes)\n", file, uri ? uri : "?", POOL_NAME,
	     name, size);
	free(uri);
	vol = new_vol(pool, name, size);
	if (!vol) {
		set_err("libvirt: cannot make volume %s: %s", name, hv_err());
		return NULL;
	}
	if (upload(conn, vol, file, size) < 0 ||
	    (!(ok = new_vol(pool, marker, 0)) && set_err("libvirt: cannot mark volume %s: %s", name, hv_err()))) {
		virStorageVolDelete(vol, 0);
		virStorageVolFree(vol);
		return NULL;
	}
	virStorageVolFree(ok);
	return vol;
}

int stage_volume(virConnectPtr conn, const char *pool_dir, const char *file, const char *suffix,
		 char *path, size_t cap)
{
	virStoragePoolPtr pool;
	virStorageVolPtr vol;
	char hash[17], name[64], *p;
	long long size;
	int ret = -1;

	if (file_hash(file, hash, &size) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s-%s", hash, suffix);
	pool = get_pool(conn, pool_dir);
	if (!pool)
		return -1;
	vol = ensure_vol(conn, pool, name, file, size);
	if (vol) {
		p = virStorageVolGetPath(vol);
		if (!p)
			set_err("libvirt: volume %s has no path: %s", name, hv_err());
		else if (path_fmt(path, cap, "%s", p) == 0)
			ret = 0;
		free(p);
		virStorageVolFree(vol);
	}
	virStoragePoolFree(pool);
	return ret;
}

/* The volume a guest's console log is: NAME.console.log. */
static int log_vol_name(const char *guest, char *out, size_t cap)
{
	return path_fmt(out, cap, "%s.console.log", guest);
}

int stage_log_path(const char *kernel_path, const char *name, char *out, size_t cap)
{
	const char *slash = strrchr(kernel_path, '/');
	char vol[128];

	if (!slash)
		return set_err("volume path %s is not absolute", kernel_path);
	if (log_vol_name(name, vol, sizeof(vol)) < 0)
		return -1;
	return path_fmt(out, cap, "%.*s/%s", (int)(slash - kernel_path), kernel_path, vol);
}

static int recv_file(virStreamPtr st, const char *data, size_t n, void *opaque)
{
	(void)st;
	return write(*(int *)opaque, data, n) == (ssize_t)n ? (int)n : -1;
}

int stage_drop_log(virConnectPtr conn, const char *guest)
{
	virStoragePoolPtr pool = virStoragePoolLookupByName(conn, POOL_NAME);
	virStorageVolPtr vol;
	char name[128];
	int ret = 0;

	if (!pool || log_vol_name(guest, name, sizeof(name)) < 0) {
		if (pool)
			virStoragePoolFree(pool);
		return pool ? -1 : 0;	/* no pool: nothing of ours on that host */
	}
	virStoragePoolRefresh(pool, 0);
	vol = virStorageVolLookupByName(pool, name);
	if (vol && virStorageVolDelete(vol, 0) < 0)
		ret = set_err("libvirt: cannot delete %s from the pool: %s", name, hv_err());
	if (vol)
		virStorageVolFree(vol);
	virStoragePoolFree(pool);
	return ret;
}

int stage_fetch_log(virConnectPtr conn, const char *remote_path, const char *local_path)
{
	virStoragePoolPtr pool = virStoragePoolLookupByName(conn, POOL_NAME);
	virStorageVolPtr vol = NULL;
	virStreamPtr st = NULL;
	char tmp[PATH_MAX + 16] = "";
	int fd = -1, ret = -1;

	if (pool)
		virStoragePoolRefresh(pool, 0);
	vol = virStorageVolLookupByPath(conn, remote_path);
	if (!vol) {
		set_err("libvirt: no console log %s on the host: %s", remote_path, hv_err());
		goto out;
	}
	/* into a file beside it, renamed over it once whole: a failed download keeps the streamed copy */
	if (path_fmt(tmp, sizeof(tmp), "%s.download", local_path) < 0)
		goto out;
	st = virStreamNew(conn, 0);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!st || fd < 0) {
		set_err("cannot fetch %s to %s: %s", remote_path, tmp, fd < 0 ? strerror(errno) : hv_err());
		goto out;
	}
	if (virStorageVolDownload(vol, st, 0, 0, 0) < 0 || virStreamRecvAll(st, recv_file, &fd) < 0 ||
	    virStreamFinish(st) < 0) {
		set_err("libvirt: downloading %s: %s", remote_path, hv_err());
		virStreamAbort(st);
		goto out;
	}
	if (close(fd) < 0 || rename(tmp, local_path) < 0) {
		fd = -1;
		set_err("cannot keep %s as %s: %s", tmp, local_path, strerror(errno));
		goto out;
	}
	fd = -1;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0 && tmp[0])
		unlink(tmp);
	if (st)
		virStreamFree(st);
	if (vol)
		virStorageVolFree(vol);
	if (pool)
		virStoragePoolFree(pool);
	return ret;
}
