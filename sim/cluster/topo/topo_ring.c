/*
 * topo_ring.c -- ring: each device linked to its two neighbours (i - 1 and
 * i + 1, around), its links split between them. A route follows the ring
 * through the devices in between, so devices share links (no folding).
 */
#include "topo_int.h"

static void ring_setup(struct topo *t, const struct topo_in *in)
{
	topo_setup_pairs(t, in, 2);
}

static int ring_linked(const struct topo *t, int la, int lb)
{
	return (la + 1) % t->dpn == lb || (lb + 1) % t->dpn == la;
}

const struct topo_ops topo_ring = {
    .name = "ring",
    .describe = "ring",
    .inside = "no switch",
    .max_dpn = 64,
    .setup = ring_setup,
    .linked = ring_linked,
    .intra_bw = topo_pairs_bw,
};
