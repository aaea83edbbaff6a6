/*
 * export.h -- a simtrace 1 job written in another tool's format: Chakra
 * execution traces (ETs) for ASTRA-sim users (`sim export chakra`,
 * docs/import.md "Exporting a job as Chakra ETs").
 *
 * Each rank of the job becomes one ET: a GlobalMetadata, then a Node per
 * op the rank issues (expanded: repeats multiplied out, `on` blocks chosen).
 * Device ops are COMP_NODEs with the device model's duration on the chip
 * given and the op's FLOPs and DRAM bytes (num_ops, tensor_size: the inputs
 * of ASTRA-sim's own roofline); collectives COMM_COLL_NODEs (comm_type,
 * comm_size in nccl-tests' convention, and for a communicator other than
 * world the pg_name of its group in ASTRA-sim's communicator group file,
 * which exp_groups_write writes); sends and receives COMM_SEND/RECV_NODEs; delays CPU
 * COMP_NODEs of their time. A node's data_deps are the previous node of its
 * stream and the latest node of each after= label, which is what the
 * replay waits for.
 *
 * sim/export/ may include the device model (times), workloads/ (the trace)
 * and the protobuf-c code of Chakra's schema (sim/import/et_def.proto); it
 * writes to a FILE * it is given: the caller makes each file complete or
 * absent (base/outfile).
 */
#ifndef SIM_EXPORT_H
#define SIM_EXPORT_H

#include "arch.h"
#include "model.h"
#include "trace.h"

#include <stdio.h>

/* The job's communicator groups other than world, numbered 1, 2, ... in
   order of (communicator, lowest rank): ASTRA-sim's communicator group file
   (--comm-group-configuration) and the ETs' pg_name. */
struct exp_groups {
	int ncomms, ranks;
	int *id; /* id[comm * ranks + rank]: the group's number, 0 when none (world, or no group) */
	int count;
};
/* 0, or 70 with why. */
int exp_groups_build(const struct trace *t, struct exp_groups *G, char *why, size_t whylen);
void exp_groups_free(struct exp_groups *G);
/* {"1": [0, 8, 16], "2": [...], ...}: 0, or -1 when f fails. */
int exp_groups_write(const struct trace *t, const struct exp_groups *G, FILE *f);

struct exp_stats {
	long nodes, comp, colls, p2p, delays;
};

/*
 * Writes rank's ET of trace t to f, device ops timed on chip c through the
 * memo dm (may be NULL); at most max_nodes nodes (0: 20 M). Adds to st.
 * Returns 0, or an exit code (65 a rank's expansion fails or has too many
 * ops, 70 out of memory) with one line in why.
 */
int exp_chakra_rank(const struct trace *t, const struct arch_chip *c, struct dm *dm, const struct exp_groups *G,
                    int rank, long long max_nodes, FILE *f, struct exp_stats *st, char *why, size_t whylen);

#endif
