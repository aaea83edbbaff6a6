/*
 * chakra_int.h -- private to sim/import/: one rank of a Chakra execution
 * trace (ET) as the reader extracts it (chakra.c), the shapes its nodes
 * recorded made into the form the Kineto op mapper reads (chakra_args.c),
 * and the writer of the job (chakra_emit.c).
 *
 * A Chakra ET is a dependency graph, not a timeline: each node (a CPU op,
 * a GPU kernel, a collective, a send or a receive) may start once the nodes
 * it lists in data_deps have ended (ASTRA-sim's feeder reads only those);
 * ctrl_deps names the CPU op whose call made it (its launcher, for a GPU
 * node). The importer writes the
 * nodes in a topological order (the file's order where the graph allows
 * it); each on a stream of its thread (CPU ops) or CUDA stream (GPU nodes),
 * where it waits for the node before it, and with `after=` for each other
 * stream's latest node it depends on.
 *
 * Invariants:
 *  1. After chk_graph, order[] is a topological order of the nodes (every
 *     resolved data dependency is earlier) and pos[] its inverse.
 *  2. A dependency on a node the file does not hold (Chakra's converter
 *     drops CPU ops it does not keep) is left out and counted in
 *     missing_deps, one on the node itself in self_deps; neither is an
 *     error.
 *  3. A node is exactly one of: modelled (text holds an op line op_parse
 *     accepts), covered (an earlier GPU node of the same CPU op carries the
 *     op that times it; it writes no line and stands for that node), a
 *     collective or a send/recv (the job's ranks hold its peers), or carried
 *     (its recorded duration as a delay).
 */
#ifndef SIM_CHAKRA_INT_H
#define SIM_CHAKRA_INT_H

#include "import.h"

#include <jansson.h>
#include <stdint.h>

enum chk_how { CH_CARRIED, CH_MODELLED, CH_COVERED, CH_COLL, CH_SEND, CH_RECV };

struct chk_node {
	uint64_t id;
	int type;         /* ChakraProtoMsg__NodeType */
	int cpu;          /* is_cpu_op */
	long long stream; /* attr stream, else tid */
	long long dur_us, start_us;
	char *name;
	char *shapes, *types, *values; /* inputs, GPU nodes only */
	uint64_t *deps;                /* ctrl_deps then data_deps, as recorded */
	int nctrl, ndeps;
	long ctrl;       /* chk_graph: the first ctrl_dep the file holds (index), or -1 */
	long long rf_id; /* attr rf_id (the host trace's record function), -1 none: the pieces "op(0)", "op(1)" of
	                    one CPU op that Chakra's converter splits share it */
	/* collectives and point to point */
	int has_comm_type, comm_type, partial;
	char *pg; /* pg_name, or NULL */
	long long comm_size, src, dst, tag;
	int has_src, has_dst;
	/* decided by chakra_emit.c */
	enum chk_how how;
	enum imp_family fam;
	int cover;       /* CH_COVERED: the node (index) whose op stands for this one */
	long long op_us; /* CH_MODELLED: recorded time of the nodes the op stands for */
	char *text;      /* CH_MODELLED: the op line; CH_COLL/SEND/RECV: the statement */
};

struct chk_rank {
	const char *path;
	int job_rank; /* from NAME.R.et, else the file's index */
	struct chk_node *nd;
	long n, cap;
	/* chk_graph */
	long *order, *pos; /* topological order, its inverse */
	long *dep;         /* resolved dependencies, CSR: dep[dstart[i] .. dstart[i+1]) */
	long *dstart;
	long missing_deps, self_deps;
	struct imp_stats st;
};

/* The communicator groups of ASTRA-sim's --comm-group-configuration file:
   {"PG_NAME": [rank, ...], ...}, sorted by name, each group's ranks
   increasing. */
struct chk_groups {
	char **name;
	int **ranks;
	int *n;
	int count;
};

/* chakra.c: reads one rank (the protobuf stream of len bytes) into r. 0 or
   an exit code with why. */
int chk_read(const unsigned char *data, size_t len, const char *name, const struct imp_options *o, int index,
             struct chk_rank *r, char *why, size_t whylen);
/* Resolves the dependencies and orders the nodes (invariants 1, 2); 0, or
   65 naming a node when they form a cycle. */
int chk_graph(struct chk_rank *r, char *why, size_t whylen);
void chk_rank_free(struct chk_rank *r);
/* Reads a communicator group file into G; 0, or 65/66 with why naming the
   file and the group. */
int chk_groups_load(const char *path, struct chk_groups *G, char *why, size_t whylen);
void chk_groups_free(struct chk_groups *G);

/* chakra_args.c: a node's recorded inputs (IOInfo's Python-literal
   strings) as the args of a Kineto CPU op ("Input Dims", "Input type",
   "Concrete Inputs"), for kin_cpu_op; NULL when they cannot be read. */
json_t *chk_args(const char *shapes, const char *types, const char *values);
/* A Python literal (lists, tuples, numbers, quoted strings, True, False,
   None) as JSON; NULL when it is not one. Exposed for the tests. */
json_t *chk_pylit(const char *s);

/* chakra_emit.c: decides every node of every rank and writes the job. */
int chk_emit(FILE *out, struct chk_rank *ranks, int n, const struct imp_options *o, const struct chk_groups *G,
             struct imp_stats *st, char *why, size_t whylen);

#endif
