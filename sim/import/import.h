/*
 * import.h -- importers of measured traces: a PyTorch profiler (Kineto)
 * trace of one or more ranks becomes a `simtrace 1` job that `sim run`
 * replays on any config (docs/import.md is the user's reference).
 *
 * What can be known of a kernel from the trace (its kind and shape, from
 * the CPU op that launched it) becomes an op the device model times; what
 * cannot keeps its measured duration as a fixed-time `delay` on its stream.
 * The host's time between launches is kept as `delay`s on a stream `host`
 * that every GPU op waits for, so a faster GPU does not speed up the host,
 * and a GPU that waited for the host still waits. The statistics say how
 * much of the measured GPU time is modelled and how much is carried as
 * measured, per kernel family, so a replay is not mistaken for a prediction.
 *
 * sim/import/ may include arch/ (exit codes) and workloads/ (every op line it
 * writes is checked with op_parse); it reads files (jansson, zlib) and
 * writes to a FILE * it is given: the caller makes the output complete or
 * absent (base/outfile).
 */
#ifndef SIM_IMPORT_H
#define SIM_IMPORT_H

struct progress; /* sim/base/progress.h */

#include <stddef.h>
#include <stdio.h>

/* Kernel families of the coverage report. */
enum imp_family { IF_GEMM, IF_ATTN, IF_ELEM, IF_MEMCPY, IF_NCCL, IF_OTHER, IF_COUNT };
const char *imp_family_name(enum imp_family f); /* "gemm" "attention" "elementwise" "memcpy" "nccl" "other" */

#define IMP_MAX_CARRY 16
#define IMP_MAX_FILES 4096

struct imp_options {
	long long max_bytes;              /* largest uncompressed file (0: Kineto 4 GiB, Chakra 512 MiB) */
	long long max_events;             /* most traceEvents per file (0: 20 M) */
	const char *carry[IMP_MAX_CARRY]; /* kernels whose name holds one of these keep their measured time */
	int ncarry;
	int all_measured;        /* every kernel keeps its measured time (a replay of the recording, to check it) */
	int host_graph;          /* kineto: no host delays (the step as a CUDA graph replays it); syncs still wait */
	long long profiler_ns;   /* kineto: host time the profiler added per CPU op it recorded, taken out of the
	                            host's gaps (--profiler-overhead; 0: the host as recorded) */
	int ranks;               /* one file given: the job's ranks, each running its graph (symmetry); 0: the files */
	const char *comm_groups; /* Chakra: ASTRA-sim's communicator group file (JSON: pg_name -> ranks), or NULL */
	/* --recorded-on: the recording chip's device-memory bandwidth (B/s) and fp16 dense matrix peak (FLOP/s);
	   carried kernels are written to scale with them on another chip (imp_write_scale); 0: kept as is */
	double ref_dram_Bps, ref_matrix_flops;
	const char *ref_name;      /* the recording chip's name, for the report */
	struct progress *progress; /* progress lines while a file is read (NULL: none) */
};

/* Measured GPU time of the imported items, and of it what the model now
   times, per family; all ranks together. Times in microseconds. */
struct imp_stats {
	int ranks;
	long items[IF_COUNT], modelled_items[IF_COUNT];
	double gpu_us[IF_COUNT], modelled_us[IF_COUNT];
	long outside; /* GPU items whose launch the trace lacks (before its window): left out */
	double outside_us;
	double span_us;          /* measured GPU span of the imported items, first start to last end (longest rank) */
	double host_us;          /* host time from the first to the last launch (longest rank) */
	long ops, delays, colls; /* lines written: device ops, carried kernels, collectives */
	int chakra;              /* the report of a Chakra import (no launch window; dependencies instead) */
	long missing_deps;       /* Chakra: dependencies on nodes the file does not hold, left out */
	long self_deps;          /* Chakra: dependencies of a node on itself, left out */
	char ref[80];            /* --recorded-on: the recording chip whose figures carried kernels scale from */
	char device[64];         /* Kineto: the recording GPU as the trace's deviceProperties names it, or "" */
	int device_units;        /* its SMs (CUs); where the trace names no device, from its kernels' grids */
	double device_mem_B;     /* its memory */
};

/*
 * Imports the Kineto traces paths[0..n) (one per rank; .json or .json.gz)
 * and writes the simtrace 1 job to out. Returns 0, or an exit code (65 bad
 * input, 66 a file cannot be read, 70 out of memory) with one line in why:
 * "PATH: traceEvents[12]: kernel 'name' has no args.correlation (expected
 * the id of the runtime call that launched it)". Nothing is written to out
 * before every file has been read and checked.
 */
/*
 * The Kineto importer's host options, as `sim import kineto` and the
 * validation's import cases spell them: key "--host" (value recorded or
 * graph) or "--profiler-overhead" (a time from 0 to 1 ms). Sets o and
 * returns 0; -1 with why set for a bad value; 1 for another key.
 */
int imp_host_option(struct imp_options *o, const char *key, const char *val, char *why, size_t whylen);

int imp_kineto(const char *const *paths, int n, const struct imp_options *o, FILE *out, struct imp_stats *st, char *why,
               size_t whylen);
/* The same for one rank held in memory (uncompressed JSON); name stands for
   the path in messages (the fuzz target's entry). */
int imp_kineto_buf(const char *data, size_t len, const char *name, const struct imp_options *o, FILE *out,
                   struct imp_stats *st, char *why, size_t whylen);

/*
 * Imports the Chakra execution traces paths[0..n) (one per rank, rank R
 * from a name NAME.R.et[.gz] when every file has one, else the file's
 * order; protobuf as Chakra's tools write it, et_def.proto) and writes the
 * simtrace 1 job to out. With one file and o->ranks > 1, every rank of the
 * job runs that file's graph. Returns as imp_kineto.
 */
int imp_chakra(const char *const *paths, int n, const struct imp_options *o, FILE *out, struct imp_stats *st, char *why,
               size_t whylen);
/* The same for one rank held in memory (the fuzz target's entry). */
int imp_chakra_buf(const unsigned char *data, size_t len, const char *name, const struct imp_options *o, FILE *out,
                   struct imp_stats *st, char *why, size_t whylen);

/* The coverage table, each line starting with prefix ("# " in the trace,
   "" on stderr). */
void imp_report(FILE *f, const struct imp_stats *st, const char *prefix);

#endif
