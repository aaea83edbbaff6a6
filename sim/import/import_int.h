/*
 * import_int.h -- private to sim/import/: one rank of a Kineto trace as the
 * reader extracts it (kineto.c), what the op mapper makes of each GPU item
 * (kineto_ops.c) and what the writer emits (kineto_emit.c).
 *
 * Invariants:
 *  1. items[] is in host order (the start of the runtime call, then the
 *     correlation id): the order the host issued them, which is each
 *     stream's execution order.
 *  2. Every GPU item (HK_LAUNCH) has a runtime call of the same correlation
 *     in the trace; GPU activity without one was launched before the
 *     profiler's window and is counted in outside/outside_us, not imported.
 *  3. An item is exactly one of: modelled (text holds an op line op_parse
 *     accepts), covered (an earlier item of the same CPU op carries the op
 *     that times it), a collective (coll set), or carried (its measured
 *     duration as a delay).
 */
#ifndef SIM_IMPORT_INT_H
#define SIM_IMPORT_INT_H

#include "import.h"
#include "jstream.h"
#include "progress.h"

#include <jansson.h>

enum kin_hkind { HK_LAUNCH, HK_SYNC, HK_WAIT };
enum kin_how { KH_CARRIED, KH_MODELLED, KH_COVERED, KH_COLL };

#define KIN_NAME 96  /* kernel name kept for the trace's comments */
#define KIN_TEXT 320 /* an op line */
/* A runtime call's own host time is at least the shorter of the call and
   this (launches take 3-15 us, 99% under 40 us in the H100 traces); of the
   rest, what the GPU was busy for is waiting for the GPU, what it was idle
   for the host's own (kineto.c). */
#define KIN_CALL_CAP_NS 50000LL

struct kin_item {
	enum kin_hkind hk;
	long long host_ns;     /* runtime call start on the host's own timeline: ns from the rank's first call,
	                          less the time earlier calls spent waiting (KIN_CALL_CAP_NS) */
	long long host_end_ns; /* host_ns + the call's own time */
	int sync_after;        /* HK_LAUNCH of a synchronous copy: the host waits for it */
	int stream;            /* Kineto stream id */
	long long dur_ns;      /* measured */
	long long op_ns;       /* KH_MODELLED: measured time of every kernel its op stands for */
	long long start_ns;    /* measured GPU start, ns from the rank's first call */
	enum imp_family fam;
	enum kin_how how;
	char name[KIN_NAME];
	char text[KIN_TEXT]; /* KH_MODELLED: the op line (no scheduling keys) */
	/* KH_COLL */
	char coll[16]; /* allreduce, allgather, ... (simtrace names) */
	double bytes;  /* nccl-tests convention */
	int *group;    /* job ranks of the process group, increasing */
	int ngroup;
	int cpu; /* index of the CPU op that launched it, -1 none */
};

struct kin_rank {
	const char *path;
	int job_rank; /* distributedInfo.rank, or the file's index */
	int has_rank;
	char device[64];     /* deviceProperties[0].name, "" when the trace has none */
	int device_units;    /* its numSms (SMs, or CUs on ROCm); with no device named, from the kernels' grids */
	double device_mem_B; /* its totalGlobalMem */
	struct kin_item *it;
	long n, cap;
	struct imp_stats st; /* this rank's share */
};

/* import_util.c: 1 when a kernel of this name keeps its measured time by
   --carry. */
int imp_carry_named(const struct imp_options *o, const char *kernel);
/* 1 when s ends with suffix (a file's ".gz", ".et") */
int imp_ends_with(const char *s, const char *suffix);
/* A refusal is one line: control characters in s (a JSON reader's snippet of the input may hold a newline)
   become spaces. */
void imp_one_line(char *s);
/* The rule a carried kernel of family fam scales by on another chip, as a
   delay's keys (" scale=dram ref=2.039e+12B/s"), when --recorded-on gave
   the recording chip: elementwise kernels and copies with device-memory
   bandwidth, GEMMs and attention (carried for want of a shape) with the
   matrix peak; collectives and other kernels keep their time. Nothing when
   it did not. */
void imp_write_scale(FILE *f, const struct imp_options *o, enum imp_family fam);
/* Increasing ranks as a trace's rank list: "0-7,16,18". */
void imp_write_ranks(FILE *f, const int *r, int n);
/* 0 when communicator g's line, "comm pgG ranks=LIST" and extra more
   characters, fits a trace line (TR_LINE_MAX); else SIM_EXIT_TRACE with
   why (a group of many ranks that are not consecutive, say every 8th of
   thousands, has no shorter form in the trace format). */
int imp_check_group(int g, const int *r, int n, int extra, char *why, size_t whylen);

/* kineto.c: reads one rank (JSON text of len bytes) into r. 0 or an exit
   code with why. */
int kin_read(const char *data, size_t len, const char *name, const struct imp_options *o, int index, struct kin_rank *r,
             char *why, size_t whylen);
/* The same from a stream (jstream.h): its traceEvents one at a time, what is used of each kept. */
int kin_read_js(struct js *J, const char *name, const struct imp_options *o, int index, struct kin_rank *r, char *why,
                size_t whylen);
void kin_rank_free(struct kin_rank *r);

/* kineto_ops.c */
enum imp_family kin_family(const char *cat, const char *kernel);
/* The op line of a CPU op's work (gemm, attn, elem) from its recorded
   shapes, into buf; 1 when it could be made, 0 when not. The kernel's name
   picks the attention implementation, and whether a pointwise op runs on
   strided operands. */
int kin_cpu_op(const char *cpu_name, json_t *cpu_args, const char *kernel, char *buf, size_t len);
/* A copy or memset item's op line; 1 or 0. Its bytes are the item's args.bytes, else those of the CPU op that
   launched it (cpu_name, cpu_args; NULL when none). */
int kin_copy_op(const char *kernel, json_t *args, const char *cpu_name, json_t *cpu_args, int memset, char *buf,
                size_t len);
/* A collective from NCCL/RCCL's recorded args (the kernel's, else its CPU
   op's): fills coll, bytes and the group; 1, or 0 when not known. */
int kin_coll(json_t *kargs, json_t *cargs, struct kin_item *it);

/* kineto_emit.c */
/* kineto_emit.c: the job of n ranks read; with sym > 1 (n is 1), a job of
   sym ranks that each run the one file's items. */
int kin_emit(FILE *out, struct kin_rank *ranks, int n, int sym, const struct imp_options *o, struct imp_stats *st,
             char *why, size_t whylen);

#endif
