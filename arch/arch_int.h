/*
 * arch_int.h -- private to arch/ and its tests.
 *
 * A config is read by libconfig, flattened into a list of leaf settings keyed
 * by dotted path ("compute.sm.count"), merged with the files it inherits and
 * the --set overrides, then bound to struct arch_chip by the parameter tables
 * of params.c. Every leaf must be consumed by some table entry: a leaf left
 * over is a misspelt or unknown key and an error.
 *
 * Calls between the files go one way (a DAG; `nm` on libsimarch.a shows it):
 * load.c -> bind.c, derive.c, kv.c; bind.c -> params.c, units.c, kv.c;
 * derive.c -> kv.c; params.c -> units.c. kv.c and units.c call no other file
 * of arch/.
 */
#ifndef SIM_ARCH_INT_H
#define SIM_ARCH_INT_H

#include "arch.h"

/* Parameter types: how a value is written and which unit it carries. */
enum ptype {
	P_INT,   /* integer count */
	P_FLOAT, /* plain number (rates per clock, ratios) */
	P_BOOL,
	P_STR,  /* free text */
	P_ENUM, /* one of `choices` */
	P_QTY,  /* quantity with a unit of kind `unit` */
};

#define PF_REQUIRED 1u

struct arch_param {
	const char *key; /* relative to its section: "clock", "matrix.fp16" */
	enum ptype type;
	enum unit_kind unit; /* for P_QTY */
	unsigned flags;
	const char *def;     /* default, as config text; NULL = unset (0) */
	double lo, hi;       /* accepted range of numbers, inclusive */
	const char *choices; /* P_ENUM: "a|b|c" */
	size_t off;          /* offset of the field in the section's struct */
	size_t size;         /* size of that field (strings) */
	const char *desc;
	const char *reader; /* which model reads it (file), or that only `sim info` prints it */
};

/* A section: a group of the config bound to one struct. */
#define SF_REQUIRED 1u /* must be present */
#define SF_MULTI    2u /* prefix ends in ".*": any number of named groups */

struct arch_section {
	const char *prefix; /* "chip", "memory.l2", "compute.*" */
	unsigned flags;
	const struct arch_param *params;
	int nparams;
	size_t chip_off; /* where the section's struct lives in struct arch_chip */
	size_t stride;   /* SF_MULTI: size of one element of that array */
	const char *desc;
};

extern const struct arch_section arch_sections[];
extern const int arch_nsections;

/* A flattened leaf setting. */
enum kv_type { KV_INT, KV_FLOAT, KV_BOOL, KV_STR };
struct kv {
	char *path;
	enum kv_type type;
	long long i;
	double f;
	int b;
	char *s;
	char *file; /* where it was set ("--set" for overrides) */
	int line;   /* line in file, or index of the --set argument */
	int used;   /* consumed by a table entry */
	int quoted; /* value was a string in the config (not bare --set text) */
};

/* The leaves in file order, with two open-addressing indexes (slot: index
   + 1, 0 empty; sizes powers of two, at most half full) so that putting and
   finding a key cost O(its depth), not O(keys): the leaves by path, and the
   groups (every proper dotted prefix of a leaf's path) by path, each to the
   first leaf in file order under it. */
struct kvslot {
	int leaf; /* index + 1 */
	int len;  /* groups: the prefix's length */
};
struct kvmap {
	struct kv *v;
	int n, cap;
	struct kvslot *leaves, *groups;
	int nleaves_cap, ngroups, groups_cap;
};

/* A boolean as a --set or a default writes it: 1 (true, yes, 1), 0 (false, no, 0), -1 otherwise (bind.c). */
int arch_parse_bool(const char *text);

/* The map and its errors (kv.c). */
void kv_clear(struct kv *v); /* frees one leaf's strings */
void kv_free(struct kvmap *m);
struct kv *kv_find(struct kvmap *m, const char *path);
/* Appends leaf v (its path in neither index) and indexes it; -1 when memory
   runs out. The leaf with v's path, or the leaf under group path (the first
   in file order), or -1. */
int kv_append(struct kvmap *m, const struct kv *v);
int kv_leaf_at(struct kvmap *m, const char *path, size_t len);
int kv_group_at(struct kvmap *m, const char *path, size_t len);
/* The first leaf under "group." in file order, or NULL. */
struct kv *kv_first_in(struct kvmap *m, const char *group);
/* file:line of a key if set, else of the first key of its nearest enclosing group. */
void kv_where(struct kvmap *m, const char *path, const char **file, int *line);

/* Binds the merged map to a chip (bind.c). Returns 0 or -1 with *err set. */
int arch_bind(struct kvmap *m, struct arch_chip *c, struct arch_error *err);
/* Checks relations between fields after binding (derive.c). */
int arch_check(struct kvmap *m, struct arch_chip *c, struct arch_error *err);

void arch_errorf(struct arch_error *e, const char *file, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
