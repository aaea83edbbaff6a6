/*
 * platform_sg.cpp -- platform_build (platform.h): a platform's devices and
 * links made in SimGrid's engine through its C++ API, in one zone whose
 * routes are platform_route's. The only C++ of sim: SimGrid 3.32's C API
 * cannot make a platform, and its zones cannot route a cluster of many nodes
 * in linear time (see platform.h). Nothing here models anything: the links
 * and routes are platform.c's.
 *
 * The zone is the engine's root (the first zone made), so a route between
 * two hosts is one call of get_local_route, with no gateway and no search.
 * Links are made in platform.c's order (the order of the XML platform's
 * links, so SimGrid's constraints are made in the same order), then the
 * hosts in rank order, each sealed as it is made.
 */
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "platform_links.h"

namespace
{

namespace sgr = simgrid::kernel::routing;

class DeviceZone final : public sgr::NetZoneImpl
{
      public:
	explicit DeviceZone(const struct platform *p) : NetZoneImpl("cluster"), p_(p) {}

	/* per link of p: its UP and DOWN halves (a FATPIPE: itself twice), as
	   the engine's objects (Link::get_impl is a dynamic_cast), and latency */
	std::vector<simgrid::kernel::resource::StandardLinkImpl *> up_, down_;
	std::vector<double> lat_;
	std::vector<int> rank_of_; /* netpoint id (rank in this zone) -> device */

	void set_link(int i, simgrid::s4u::Link *up, simgrid::s4u::Link *down)
	{
		up_[(size_t)i] = up->get_impl();
		down_[(size_t)i] = down->get_impl();
		lat_[(size_t)i] = up->get_latency();
	}

	void get_local_route(const sgr::NetPoint *src, const sgr::NetPoint *dst, sgr::Route *into,
	                     double *latency) override
	{
		int a = rank_of_.at(src->id()), b = rank_of_.at(dst->id());
		if (a == b)
			return; /* not asked: a flow of a device to itself carries nothing (coll.c drops it) */
		struct phop hops[PLATFORM_MAX_HOPS];
		int n = platform_route(p_, a, b, hops);
		for (int i = 0; i < n; i++) {
			size_t l = (size_t)hops[i].link;
			into->link_list_.push_back(hops[i].dir == PH_DOWN ? down_[l] : up_[l]);
			if (latency)
				*latency += lat_[l];
		}
	}

      private:
	const struct platform *p_;
};

} // namespace

extern "C" int platform_build(const struct platform *p, sg_host_t *hosts, char *why, size_t whylen)
{
	try {
		auto *zone = new DeviceZone(p); /* the engine owns it from here (the root zone) */
		simgrid::s4u::NetZone *nz = zone->get_iface();
		zone->up_.resize((size_t)p->nlinks);
		zone->down_.resize((size_t)p->nlinks);
		zone->lat_.resize((size_t)p->nlinks);
		for (int i = 0; i < p->nlinks; i++) {
			const struct plink *pl = &p->links[i];
			if (pl->fatpipe) {
				simgrid::s4u::Link *l = nz->create_link(pl->name, pl->bw);
				l->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE)
				    ->set_latency(0)
				    ->seal();
				zone->set_link(i, l, l);
			} else {
				simgrid::s4u::SplitDuplexLink *l = nz->create_split_duplex_link(pl->name, pl->bw);
				l->set_latency(0)->seal();
				zone->set_link(i, l->get_link_up(), l->get_link_down());
			}
		}
		int n = p->ndev;
		for (int r = 0; r < n; r++) {
			simgrid::s4u::Host *h = nz->create_host("dev" + std::to_string(r), 1e9);
			size_t id = h->get_netpoint()->id();
			if (zone->rank_of_.size() <= id)
				zone->rank_of_.resize(id + 1, -1);
			zone->rank_of_[id] = r;
			hosts[r] = h->seal();
		}
		nz->seal();
		simgrid::s4u::Engine::on_platform_created();
	} catch (const std::exception &e) {
		snprintf(why, whylen, "SimGrid refused the platform: %s", e.what());
		return -1;
	}
	return 0;
}
