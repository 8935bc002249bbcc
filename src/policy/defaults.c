/* defaults.c: the default denies. Credentials are the usual stores of
 * tokens and keys in a home directory (and the host's own secrets, which
 * matter when the operator is root); escape sockets are those that let a
 * process act outside any sandbox (a user or system bus, container
 * engines, an ssh agent, init itself). */
#include "policy/defaults.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative to HOME. */
static const char *const home_credentials[] = {
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube",
	".config/gh", ".docker/config.json", ".netrc", ".git-credentials",
	/* also these, which hold tokens as plainly as the ones above */
	".claude/.credentials.json", ".config/op", ".password-store",
	".local/share/keyrings", ".npmrc", ".pypirc", ".cargo/credentials",
	".cargo/credentials.toml", ".config/hub", ".vault-token",
	".terraform.d/credentials.tfrc.json", ".config/rclone",
};

static const char *const host_credentials[] = {
	"/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_rsa_key",
	"/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
	"/etc/ssh/ssh_host_dsa_key",
};

static const char *const home_sockets[] = {
	".docker/run/docker.sock", ".docker/desktop/docker.sock",
};

static const char *const host_sockets[] = {
	"/run/docker.sock", "/var/run/docker.sock", "/run/containerd",
	"/run/podman/podman.sock", "/run/dbus/system_bus_socket",
	"/var/run/dbus/system_bus_socket", "/run/systemd/private",
	"/run/systemd/io.systemd.ManagedOOM", "/run/snapd.socket",
	"/run/snapd-snap.socket", "/run/libvirt", "/run/crio/crio.sock",
	"/run/buildkit/buildkitd.sock", "/var/lib/lxd/unix.socket",
	"/var/snap/lxd/common/lxd/unix.socket",
};

static int push(struct default_deny **v, size_t *n, const char *path,
		enum default_kind kind, struct err **e)
{
	struct default_deny *nv;
	char *canon = NULL;
	char **links = NULL;

	if (fs_canonical_links(path, &canon, &links, e) < 0) {
		strv_free(links);
		return err_wrap(e, "default deny");
	}
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*v)[i].path, canon) == 0) {
			free(canon);
			strv_free(links);
			return 0;
		}
	}
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv) {
		free(canon);
		strv_free(links);
		return err_set(e, ERR_INTERNAL, ENOMEM, "default denies");
	}
	nv[*n].path = canon;
	nv[*n].kind = kind;
	nv[*n].links = links;
	(*n)++;
	*v = nv;
	return 0;
}

static int push_home(struct default_deny **v, size_t *n, const char *home,
		     const char *rel, enum default_kind kind, struct err **e)
{
	_cleanup_free_ char *p = fs_path_join(home, rel);

	if (!p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "default denies");
	return push(v, n, p, kind, e);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int policy_default_denies(const struct default_env *env,
			  struct default_deny **out, size_t *n, struct err **e)
{
	struct default_deny *v = NULL;
	size_t c = 0;
	char run_user[64];
	int r = 0;

	if (!env->home || env->home[0] != '/')
		return err_set(e, ERR_CONFIG, 0, "HOME is not an absolute path");
	for (size_t i = 0; r == 0 && i < COUNT(home_credentials); i++)
		r = push_home(&v, &c, env->home, home_credentials[i], DEFAULT_CREDENTIAL, e);
	for (size_t i = 0; r == 0 && i < COUNT(host_credentials); i++)
		r = push(&v, &c, host_credentials[i], DEFAULT_CREDENTIAL, e);
	for (size_t i = 0; r == 0 && i < COUNT(home_sockets); i++)
		r = push_home(&v, &c, env->home, home_sockets[i], DEFAULT_SOCKET, e);
	for (size_t i = 0; r == 0 && i < COUNT(host_sockets); i++)
		r = push(&v, &c, host_sockets[i], DEFAULT_SOCKET, e);
	snprintf(run_user, sizeof(run_user), "/run/user/%u", (unsigned)env->uid);
	if (r == 0)
		r = push(&v, &c, run_user, DEFAULT_SOCKET, e);
	/* Only absolute values count: a relative one names nothing certain. */
	if (r == 0 && env->runtime_dir && env->runtime_dir[0] == '/')
		r = push(&v, &c, env->runtime_dir, DEFAULT_SOCKET, e);
	if (r == 0 && env->ssh_auth_sock && env->ssh_auth_sock[0] == '/')
		r = push(&v, &c, env->ssh_auth_sock, DEFAULT_SOCKET, e);
	if (r < 0) {
		policy_default_denies_free(v, c);
		return -1;
	}
	*out = v;
	*n = c;
	return 0;
}

void policy_default_denies_free(struct default_deny *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].path);
		strv_free(d[i].links);
	}
	free(d);
}
