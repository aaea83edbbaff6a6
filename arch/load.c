/*
 * load.c -- reading a config: libconfig, `inherits`, `--set`.
 *
 * libconfig 1.5 has no overrides, so each file is flattened into leaf
 * settings keyed by dotted path with the file and line they came from; a file
 * that inherits another is merged over it key by key (a child replaces a
 * leaf, never a whole group), and the --set overrides are merged last. The
 * merged map is then bound to a struct arch_chip by the tables (bind.c).
 *
 * Invariants: every leaf keeps the file:line where its final value was set;
 * a path is never both a leaf and a group; inheritance chains are at most
 * MAX_DEPTH long and never revisit a file.
 */
#include "arch_int.h"

#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 16
#define SYNTAX_HINT(cf)                                                                                                \
	(config_error_type(cf) == CONFIG_ERR_PARSE && strstr(config_error_text(cf), "syntax")                          \
	     ? " (settings are written name = value; and groups name = { ... };)"                                      \
	     : "")

static char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p) {
		fprintf(stderr, "sim: out of memory\n");
		exit(SIM_EXIT_INTERNAL);
	}
	return p;
}

/* Is a a proper dotted prefix of b ("x.y" of "x.y.z")? */
static int is_group_of(const char *a, const char *b)
{
	size_t n = strlen(a);
	return strncmp(a, b, n) == 0 && b[n] == '.';
}

/*
 * Puts a leaf into the map, replacing an earlier value of the same path.
 * Takes ownership of v's strings. Fails if the path is a group elsewhere.
 */
static int kv_put(struct kvmap *m, struct kv *v, struct arch_error *err)
{
	for (int i = 0; i < m->n; i++) {
		struct kv *o = &m->v[i];
		if (strcmp(o->path, v->path) == 0) {
			free(o->path);
			free(o->s);
			free(o->file);
			*o = *v;
			return 0;
		}
		if (is_group_of(o->path, v->path) || is_group_of(v->path, o->path)) {
			int deeper = is_group_of(o->path, v->path); /* v sets a key inside o */
			arch_errorf(err, v->file, v->line, SIM_EXIT_CONFIG, "'%s' is a %s here but a %s in %s:%d",
			            deeper ? o->path : v->path, deeper ? "group" : "value", deeper ? "value" : "group",
			            o->file, o->line);
			kv_clear(v);
			return -1;
		}
	}
	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 64;
		struct kv *nv = realloc(m->v, (size_t)cap * sizeof *nv);
		if (!nv) {
			fprintf(stderr, "sim: out of memory\n");
			exit(SIM_EXIT_INTERNAL);
		}
		m->v = nv;
		m->cap = cap;
	}
	m->v[m->n++] = *v;
	return 0;
}

/* Flattens one libconfig setting (recursively) into the map. */
static int flatten(struct kvmap *m, config_setting_t *s, const char *prefix, const char *file, struct arch_error *err)
{
	const char *name = config_setting_name(s);
	char path[512];
	int line = (int)config_setting_source_line(s);
	const char *sf = config_setting_source_file(s);
	if (sf) /* @include'd text reports its own file */
		file = sf;
	if (prefix[0])
		snprintf(path, sizeof path, "%s.%s", prefix, name ? name : "?");
	else
		snprintf(path, sizeof path, "%s", name ? name : "");
	if (strlen(path) > 200) {
		arch_errorf(err, file, line, SIM_EXIT_CONFIG, "key path '%.60s...' is too long", path);
		return -1;
	}
	struct kv v = {0};
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP:
		for (int i = 0; i < config_setting_length(s); i++) {
			config_setting_t *c = config_setting_get_elem(s, (unsigned)i);
			if (!prefix[0] && !path[0] && strcmp(config_setting_name(c), "inherits") == 0)
				continue; /* handled by load_file */
			if (flatten(m, c, path, file, err))
				return -1;
		}
		return 0;
	case CONFIG_TYPE_ARRAY:
	case CONFIG_TYPE_LIST:
		arch_errorf(err, file, line, SIM_EXIT_CONFIG,
		            "%s: lists and arrays are not used in sim configs; expected a value or a { group }", path);
		return -1;
	case CONFIG_TYPE_INT:
		v.type = KV_INT;
		v.i = config_setting_get_int(s);
		v.f = (double)v.i;
		break;
	case CONFIG_TYPE_INT64:
		v.type = KV_INT;
		v.i = config_setting_get_int64(s);
		v.f = (double)v.i;
		break;
	case CONFIG_TYPE_FLOAT:
		v.type = KV_FLOAT;
		v.f = config_setting_get_float(s);
		break;
	case CONFIG_TYPE_BOOL:
		v.type = KV_BOOL;
		v.b = config_setting_get_bool(s);
		break;
	case CONFIG_TYPE_STRING:
		v.type = KV_STR;
		v.s = xstrdup(config_setting_get_string(s));
		v.quoted = 1;
		break;
	default: arch_errorf(err, file, line, SIM_EXIT_CONFIG, "%s: unsupported value", path); return -1;
	}
	v.path = xstrdup(path);
	v.file = xstrdup(file);
	v.line = line;
	return kv_put(m, &v, err);
}

static void dir_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(out, len, ".");
	else if (slash == path)
		snprintf(out, len, "/");
	else
		snprintf(out, len, "%.*s", (int)(slash - path), path);
}

struct chain {
	const char *files[MAX_DEPTH + 1]; /* canonical paths being loaded */
	int n;
};

static int load_config(struct kvmap *m, config_t *cf, const char *file, const char *dir, struct chain *ch,
                       struct arch_error *err);

/* Reads one file (path as the user or an `inherits` wrote it) and merges it. */
static int load_file(struct kvmap *m, const char *file, struct chain *ch, int from_line, const char *from_file,
                     struct arch_error *err)
{
	char canon[PATH_MAX], dir[PATH_MAX];
	FILE *f = fopen(file, "r");
	if (!f) {
		if (ch->n == 0)
			arch_errorf(err, file, 0, errno == ENOENT ? SIM_EXIT_NOINPUT : SIM_EXIT_CONFIG,
			            "cannot open config: %s", strerror(errno));
		else
			arch_errorf(err, from_file, from_line, SIM_EXIT_CONFIG, "inherits: cannot open '%s': %s", file,
			            strerror(errno));
		return -1;
	}
	fclose(f);
	if (!realpath(file, canon))
		snprintf(canon, sizeof canon, "%s", file);
	for (int i = 0; i < ch->n; i++) {
		if (strcmp(ch->files[i], canon) == 0) {
			arch_errorf(err, from_file, from_line, SIM_EXIT_CONFIG,
			            "inherits loop: '%s' is already being loaded", file);
			return -1;
		}
	}
	if (ch->n >= MAX_DEPTH) {
		arch_errorf(err, from_file, from_line, SIM_EXIT_CONFIG, "inherits: more than %d levels", MAX_DEPTH);
		return -1;
	}
	dir_of(file, dir, sizeof dir);
	config_t cf;
	config_init(&cf);
	config_set_include_dir(&cf, dir);
	int rc;
	if (config_read_file(&cf, file) != CONFIG_TRUE) {
		const char *ef = config_error_file(&cf);
		arch_errorf(err, ef ? ef : file, config_error_line(&cf), SIM_EXIT_CONFIG, "%s%s",
		            config_error_text(&cf), SYNTAX_HINT(&cf));
		rc = -1;
	} else {
		ch->files[ch->n++] = canon;
		rc = load_config(m, &cf, file, dir, ch, err);
		ch->n--;
	}
	config_destroy(&cf);
	return rc;
}

/* Merges an already parsed config: its parent first, then its own leaves. */
static int load_config(struct kvmap *m, config_t *cf, const char *file, const char *dir, struct chain *ch,
                       struct arch_error *err)
{
	config_setting_t *root = config_root_setting(cf);
	config_setting_t *inh = config_setting_get_member(root, "inherits");
	if (inh) {
		int line = (int)config_setting_source_line(inh);
		const char *parent = config_setting_get_string(inh);
		if (config_setting_type(inh) != CONFIG_TYPE_STRING || !parent || !parent[0]) {
			arch_errorf(err, file, line, SIM_EXIT_CONFIG,
			            "inherits: expected a file name in quotes, e.g. inherits = \"h100.cfg\";");
			return -1;
		}
		char ppath[PATH_MAX];
		if (parent[0] == '/' || !strcmp(dir, "."))
			snprintf(ppath, sizeof ppath, "%s", parent);
		else
			snprintf(ppath, sizeof ppath, "%s/%s", dir, parent);
		if (load_file(m, ppath, ch, line, file, err))
			return -1;
	}
	return flatten(m, root, "", file, err);
}

/* Applies "path=value" overrides; the value stays text until bound. */
static int apply_sets(struct kvmap *m, const char *const *sets, int nsets, struct arch_error *err)
{
	for (int i = 0; i < nsets; i++) {
		const char *eq = strchr(sets[i], '=');
		if (!eq || eq == sets[i] || !eq[1]) {
			arch_errorf(err, "--set", i + 1, SIM_EXIT_CONFIG,
			            "'%s': expected path=value, e.g. --set compute.sm.count=114", sets[i]);
			return -1;
		}
		struct kv v = {0};
		char path[256];
		snprintf(path, sizeof path, "%.*s", (int)(eq - sets[i]), sets[i]);
		v.path = xstrdup(path);
		v.type = KV_STR;
		v.s = xstrdup(eq + 1);
		v.file = xstrdup("--set");
		v.line = i + 1;
		/* a value written in quotes on the command line is a string */
		size_t n = strlen(v.s);
		if (n >= 2 && v.s[0] == '"' && v.s[n - 1] == '"') {
			memmove(v.s, v.s + 1, n - 2);
			v.s[n - 2] = '\0';
			v.quoted = 1;
		}
		if (kv_put(m, &v, err))
			return -1;
	}
	return 0;
}

static struct arch_chip *finish(struct kvmap *m, const char *name, const char *const *sets, int nsets,
                                struct arch_error *err)
{
	struct arch_chip *c = NULL;
	if (apply_sets(m, sets, nsets, err))
		goto fail;
	c = calloc(1, sizeof *c);
	if (!c) {
		arch_errorf(err, name, 0, SIM_EXIT_INTERNAL, "out of memory");
		goto fail;
	}
	snprintf(c->path, sizeof c->path, "%s", name);
	if (arch_bind(m, c, err) || arch_check(m, c, err))
		goto fail;
	for (int i = 0; i < nsets && i < (int)(sizeof c->sets / sizeof c->sets[0]); i++) {
		snprintf(c->sets[i], sizeof c->sets[i], "%s", sets[i]);
		c->nsets = i + 1;
	}
	kv_free(m);
	return c;
fail:
	free(c);
	kv_free(m);
	return NULL;
}

struct arch_chip *arch_load(const char *path, const char *const *sets, int nsets, struct arch_error *err)
{
	struct kvmap m = {0};
	struct chain ch = {.n = 0};
	memset(err, 0, sizeof *err);
	if (load_file(&m, path, &ch, 0, path, err)) {
		kv_free(&m);
		return NULL;
	}
	return finish(&m, path, sets, nsets, err);
}

struct arch_chip *arch_load_string(const char *text, const char *name, const char *basedir, const char *const *sets,
                                   int nsets, struct arch_error *err)
{
	struct kvmap m = {0};
	struct chain ch = {.n = 0};
	config_t cf;
	memset(err, 0, sizeof *err);
	config_init(&cf);
	config_set_include_dir(&cf, basedir);
	if (config_read_string(&cf, text) != CONFIG_TRUE) {
		arch_errorf(err, name, config_error_line(&cf), SIM_EXIT_CONFIG, "%s%s", config_error_text(&cf),
		            SYNTAX_HINT(&cf));
		config_destroy(&cf);
		return NULL;
	}
	int rc = load_config(&m, &cf, name, basedir, &ch, err);
	config_destroy(&cf);
	if (rc) {
		kv_free(&m);
		return NULL;
	}
	return finish(&m, name, sets, nsets, err);
}

void arch_free(struct arch_chip *c)
{
	free(c);
}
