/*
 * load.c -- reading a config: libconfig, `inherits`, `--set`.
 *
 * libconfig 1.5 has no overrides, so each file is flattened into leaf
 * settings keyed by dotted path with the file and line they came from; a file
 * that inherits another is merged over it key by key (a child replaces a
 * leaf, never a whole group), and the --set overrides are merged last. The
 * merged map is then bound to a struct arch_chip by the tables (bind.c).
 *
 * A config that says chip.hypothetical = true (or --set chip.hypothetical=true)
 * keeps none of the published figures, year and price of what it inherits:
 * a design has only the facts it states itself.
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

/*
 * Puts a leaf into the map, replacing an earlier value of the same path.
 * Takes ownership of v's strings. Fails if the path is a group elsewhere,
 * or a group of it a value. O(the path's depth): the map's indexes.
 */
static int kv_put(struct kvmap *m, struct kv *v, struct arch_error *err)
{
	const char *p = v->path;
	int i = kv_leaf_at(m, p, strlen(p));
	if (i >= 0) {
		struct kv *o = &m->v[i];
		free(o->path);
		free(o->s);
		free(o->file);
		*o = *v;
		return 0;
	}
	int deeper = 0; /* a group of v's path is a value (else v's path is a group) */
	i = kv_group_at(m, p, strlen(p));
	for (const char *dot = strchr(p, '.'); i < 0 && dot; dot = strchr(dot + 1, '.'))
		if ((i = kv_leaf_at(m, p, (size_t)(dot - p))) >= 0)
			deeper = 1;
	if (i >= 0) {
		const struct kv *o = &m->v[i];
		arch_errorf(err, v->file, v->line, SIM_EXIT_CONFIG, "'%s' is a %s here but a %s in %s:%d",
		            deeper ? o->path : v->path, deeper ? "group" : "value", deeper ? "value" : "group", o->file,
		            o->line);
		kv_clear(v);
		return -1;
	}
	if (kv_append(m, v)) {
		fprintf(stderr, "sim: out of memory\n");
		exit(SIM_EXIT_INTERNAL);
	}
	return 0;
}

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

/*
 * Bounds on one config file, checked before libconfig parses it: libconfig
 * looks for a duplicate of each new setting among its group's settings
 * (config_setting_add), which is quadratic in a group's size, so the text
 * is held to ARCH_MAX_SETTINGS assignments (`=` or `:` outside strings and
 * comments; the largest shipped config has about 110) and ARCH_MAX_CONFIG_BYTES.
 */
#define ARCH_MAX_SETTINGS     4096
#define ARCH_MAX_CONFIG_BYTES (4L << 20)

static int check_size(FILE *f, const char *file, struct arch_error *err)
{
	long bytes = 0, n = 0;
	int c, prev = 0, state = 0; /* 0 text, 1 string, 2 line comment, 3 block comment */
	while ((c = getc(f)) != EOF) {
		if (++bytes > ARCH_MAX_CONFIG_BYTES) {
			arch_errorf(err, file, 0, SIM_EXIT_CONFIG, "larger than %ld MiB: not a config",
			            ARCH_MAX_CONFIG_BYTES >> 20);
			return -1;
		}
		switch (state) {
		case 0:
			if (c == '"')
				state = 1;
			else if (c == '#' || (c == '/' && prev == '/'))
				state = 2;
			else if (c == '*' && prev == '/')
				state = 3;
			else if ((c == '=' || c == ':') && ++n > ARCH_MAX_SETTINGS) {
				arch_errorf(err, file, 0, SIM_EXIT_CONFIG, "more than %d settings: not a config",
				            ARCH_MAX_SETTINGS);
				return -1;
			}
			break;
		case 1:
			if (c == '"' && prev != '\\')
				state = 0;
			break;
		case 2:
			if (c == '\n')
				state = 0;
			break;
		default:
			if (c == '/' && prev == '*')
				state = 0, c = 0;
			break;
		}
		prev = c == '\\' && prev == '\\' ? 0 : c;
	}
	return 0;
}

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
	int big = check_size(f, file, err);
	fclose(f);
	if (big)
		return -1;
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

/* A product's facts: its published figures, year and price. A hypothetical design (chip.hypothetical = true)
   inherits none of them from the config it starts from; it has those its own file (or a --set) states. */
static int product_fact(const char *path)
{
	return !strncmp(path, "published.", 10) || !strcmp(path, "chip.year") || !strcmp(path, "chip.price");
}

/* Drops the product facts from m (the parent chain's leaves, before the hypothetical's own). */
static void drop_product_facts(struct kvmap *m)
{
	struct kvmap keep = {0};
	for (int i = 0; i < m->n; i++) {
		if (product_fact(m->v[i].path)) {
			kv_clear(&m->v[i]);
			continue;
		}
		if (kv_append(&keep, &m->v[i])) {
			fprintf(stderr, "sim: out of memory\n");
			exit(SIM_EXIT_INTERNAL);
		}
	}
	free(m->v);
	free(m->leaves);
	free(m->groups);
	*m = keep;
}

/* Whether the --set options leave chip.hypothetical true (the last of them wins; the words the binder takes for a
   boolean, quoted or not). */
static int sets_hypothetical(const char *const *sets, int nsets)
{
	static const char key[] = "chip.hypothetical=";
	int on = 0;
	for (int i = 0; i < nsets; i++) {
		if (strncmp(sets[i], key, sizeof key - 1))
			continue;
		char v[16];
		const char *t = sets[i] + sizeof key - 1;
		size_t n = strlen(t);
		if (n >= 2 && t[0] == '"' && t[n - 1] == '"')
			t++, n -= 2;
		snprintf(v, sizeof v, "%.*s", (int)(n < sizeof v ? n : sizeof v - 1), t);
		if (arch_parse_bool(v) >= 0)
			on = arch_parse_bool(v);
	}
	return on;
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
		int hypo = 0;
		if (config_lookup_bool(cf, "chip.hypothetical", &hypo) == CONFIG_TRUE && hypo)
			drop_product_facts(m);
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
	if (sets_hypothetical(sets, nsets)) /* --set chip.hypothetical=true: the config's facts are not the design's */
		drop_product_facts(m);
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
