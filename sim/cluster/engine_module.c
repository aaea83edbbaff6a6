/*
 * engine_module.c -- the table the engine module (sim-engine.so) exports,
 * the only symbol it exports: engine.h says why the engine is a module.
 */
#include "engine.h"

#include <simgrid/forward.h> /* SG_BEGIN_DECL, needed by version.h */
#include <simgrid/version.h>

__attribute__((visibility("default"))) extern const struct rp_engine sim_engine;

const struct rp_engine sim_engine = {
    .abi = RP_ENGINE_ABI,
    .result_bytes = sizeof(struct rp_result),
    .options_bytes = sizeof(struct rp_options),
    .span_bytes = sizeof(struct rp_span),
    .run = rp_run,
    .simgrid_version = sg_version_get,
};
