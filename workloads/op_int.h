/*
 * op_int.h -- what op.c (the parser) and op_text.c (canonical text, useful
 * work) share: the words each key takes, in enum order, NULL-terminated.
 */
#ifndef SIM_WORKLOADS_OP_INT_H
#define SIM_WORKLOADS_OP_INT_H

extern const char *const op_trans_names[];    /* enum op_trans */
extern const char *const op_epi_names[];      /* enum op_epilogue */
extern const char *const op_dir_names[];      /* enum op_dir: attention's fwd, bwd */
extern const char *const op_conv_dir_names[]; /* enum op_dir: conv's fwd, bwd, dgrad, wgrad */
extern const char *const op_place_names[];    /* enum op_place */

/* names[i] for 0 <= i < count, else "?" */
const char *op_name_in(const char *const *names, int count, int i);
/* an arch dtype's name, "?" out of range */
const char *op_dtype_name(int dt);

#endif
