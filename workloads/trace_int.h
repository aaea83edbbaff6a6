/*
 * trace_int.h -- private to the trace (workloads/trace*.c): the parsed tree
 * that trace.c builds and trace_cursor.c expands for one rank at a time.
 */
#ifndef SIM_TRACE_INT_H
#define SIM_TRACE_INT_H

#include "trace.h"

#include <stddef.h>

#define MAX_DEPTH 64 /* deepest nesting of blocks, calls included */

/* an interned table of names (streams, labels, marks, algo= names, communicators, defs) */
struct names {
	char **s;
	int *line; /* where each was first defined */
	int n, cap;
	int *ht; /* open addressing: index or -1 */
	int hcap;
};

static inline const char *names_get(const struct names *t, int i)
{
	return i >= 0 && i < t->n ? t->s[i] : "?";
}

/* ---- the tree ---- */

enum ntype { N_EVENT, N_REPEAT, N_ON, N_CALL };

struct node {
	int type;
	int line;
	int arg;         /* N_EVENT: event; N_ON: selector set; N_CALL: def */
	int child;       /* N_REPEAT, N_ON: body block */
	long long count; /* N_REPEAT */
};

struct block {
	struct node *v;
	int n, cap;
};

enum { PEER_ABS = -2, PEER_RANK = -1 }; /* else an enum tr_dim */

struct evnode {
	struct tr_event ev;
	int peer_dim;     /* TK_SEND, TK_RECV: PEER_ABS (ev.peer is the rank), PEER_RANK or a dim */
	long long peer_k; /* signed offset for PEER_RANK and dims */
};

struct def {
	int block;
	int height; /* nesting below the body: 0 when it holds no block */
	int open;   /* still being read (a call now would be a cycle) */
};

enum { CK_WORLD, CK_DIMS, CK_RANKS };
struct ival {
	int lo, hi;
};

struct comm {
	int kind;
	unsigned dims;   /* CK_DIMS: bit per enum tr_dim */
	struct ival *iv; /* CK_RANKS: the members as sorted, disjoint, non-adjacent ranges */
	int niv;
	int n; /* CK_RANKS: how many members */
};

struct sel {
	int key; /* -1: rank, else enum tr_dim */
	int neg; /* != */
	int first, n;
};
struct selset {
	int first, n;
};

struct trace {
	char *path;
	int ranks;
	int size[DIM_COUNT], stride[DIM_COUNT], order[DIM_COUNT];
	struct names streams, labels, marks, algos, commnames, defnames;
	struct comm *comms;
	int ccap;
	struct def *defs;
	int dcap;
	struct block *blocks;
	int nblocks, bcap;
	struct evnode *evs;
	int nevs, ecap;
	struct ival *ivals;
	int nivals, icap;
	struct sel *sels;
	int nsels, scap;
	struct selset *selsets;
	int nselsets, sscap;
	int height; /* nesting depth of the top level, calls included */
	struct tr_workload workload;
	int has_workload;
};

/* "PATH:LINE: message" (no LINE when 0) into why, unprintable bytes as '?'; returns -1 */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
int tr_fail_at(char *why, size_t whylen, const char *path, int line, const char *fmt, ...);

/* the format's words (trace_lex.c): NULL-terminated, in the order of their enums */
extern const char *const tp_dim_names[DIM_COUNT + 1];
extern const char *const tp_coll_names[CO_COUNT + 1];
extern const char *const tp_mem_names[MEM_COUNT + 1];

/* the size of every group of a communicator (trace_query.c) */
int tp_comm_size(const struct trace *t, int comm);

#endif
