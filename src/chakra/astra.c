/*
 * astra.c - ASTRA-sim's analytical network (network.yml) and system
 * (system.json) as a scenario's cluster: the overrides that make it.
 *
 * network.yml lists, per dimension, the topology (Ring, Switch,
 * FullyConnected), the NPUs, the bandwidth of one link in GB/s (ASTRA-sim
 * takes them as 2^30 bytes) and its latency in ns (astra-network-analytical,
 * NetworkParser.cpp and NetworkFunction.cpp). A Switch dimension's message
 * crosses two links (Switch.cpp: src -> switch -> dest), a FullyConnected
 * one's one. Rings in every dimension are a torus; a first dimension of
 * Switch or FullyConnected is the server's NVLink domain and a second one
 * of Switch the network between servers. system.json names the collective
 * algorithms; its scheduling and chunking keys have no counterpart here and
 * are listed as not mapped.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "chakra/chakra.h"
#include "chakra/chakra_int.h"
#include "config/yaml_node.h"
#include "core/file.h"

enum { T_RING, T_SWITCH, T_FULL };
static const char *const topo_names[] = { "Ring", "Switch", "FullyConnected" };

#define MAX_DIMS 8

static void add_set(cs_chakra_astra *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_set(cs_chakra_astra *a, const char *fmt, ...)
{
	if (a->nsets >= CS_CHAKRA_ASTRA_SETS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->sets[a->nsets++], sizeof a->sets[0], fmt, ap);
	va_end(ap);
}

static void add_note(cs_chakra_astra *a, const char *word)
{
	size_t have = strlen(a->unmapped);
	if (have + strlen(word) + 3 < sizeof a->unmapped)
		snprintf(a->unmapped + have, sizeof a->unmapped - have, "%s%s", have ? ", " : "", word);
}

/* A list of scalars under `key` of the mapping: its nodes, or NULL after a
 * message. A lone scalar is a list of one (yaml-cpp reads it so). */
static int list_of(yaml_document_t *doc, yaml_node_t *map, const char *key, const char *file,
		   yaml_node_t **out, int *n, cs_diag *diag)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key),
			    *v = yaml_document_get_node(doc, p->value);
		if (k->type != YAML_SCALAR_NODE || strcmp((const char *)k->data.scalar.value, key) != 0)
			continue;
		*n = 0;
		if (v->type == YAML_SCALAR_NODE) {
			out[(*n)++] = v;
			return 0;
		}
		if (v->type != YAML_SEQUENCE_NODE) {
			cs__yaml_at(diag, file, v, "'%s' is %s, not a list", key, cs__yaml_type_word(v));
			return -1;
		}
		for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top;
		     i++) {
			yaml_node_t *e = yaml_document_get_node(doc, *i);
			if (*n == MAX_DIMS) {
				cs__yaml_at(diag, file, e, "more than %d dimensions in '%s'", MAX_DIMS, key);
				return -1;
			}
			if (e->type != YAML_SCALAR_NODE) {
				cs__yaml_at(diag, file, e, "'%s' holds %s, not a value", key,
					    cs__yaml_type_word(e));
				return -1;
			}
			out[(*n)++] = e;
		}
		return 0;
	}
	cs__yaml_at(diag, file, map,
		    "no '%s' (ASTRA-sim's analytical network lists topology, npus_count, "
		    "bandwidth and latency per dimension)",
		    key);
	return -1;
}

static cs_status read_network(const char *file, cs_chakra_astra *a, cs_diag *diag)
{
	char *buf;
	size_t len;
	cs_status st = cs_file_read(file, CS_CHAKRA_ASTRA_MAX_BYTES, &buf, &len, diag);
	if (st != CS_OK)
		return st;
	yaml_parser_t yp;
	yaml_document_t doc;
	if ((st = cs__yaml_load(&yp, buf, len, file, &doc, diag)) != CS_OK) {
		free(buf);
		return st;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	yaml_node_t *topo[MAX_DIMS], *npus[MAX_DIMS], *bw[MAX_DIMS], *lat[MAX_DIMS];
	int nt, nn, nb, nl, kind[MAX_DIMS];
	int64_t count[MAX_DIMS], gpus = 1;
	double gbs[MAX_DIMS], ns[MAX_DIMS];
	st = CS_ERR_INPUT;
	if (!root || root->type != YAML_MAPPING_NODE) {
		snprintf(diag->msg, sizeof diag->msg,
			 "%.700s: not an ASTRA-sim network file (a mapping of "
			 "topology, npus_count, bandwidth and latency)",
			 file);
		goto out;
	}
	if (list_of(&doc, root, "topology", file, topo, &nt, diag) ||
	    list_of(&doc, root, "npus_count", file, npus, &nn, diag) ||
	    list_of(&doc, root, "bandwidth", file, bw, &nb, diag) ||
	    list_of(&doc, root, "latency", file, lat, &nl, diag))
		goto out;
	if (nn != nt || nb != nt || nl != nt) {
		yaml_node_t *bad = nn != nt ? npus[0] : nb != nt ? bw[0] : lat[0];
		cs__yaml_at(diag, file, bad, "%d topology dimensions but %d in '%s'", nt,
			    nn != nt   ? nn
			    : nb != nt ? nb
				       : nl,
			    nn != nt   ? "npus_count"
			    : nb != nt ? "bandwidth"
				       : "latency");
		goto out;
	}
	if (nt == 0) {
		cs__yaml_at(diag, file, root, "no dimension in 'topology'");
		goto out;
	}
	for (int d = 0; d < nt; d++) {
		const char *t = (const char *)topo[d]->data.scalar.value;
		kind[d] = -1;
		for (int k = 0; k < 3; k++)
			if (strcmp(t, topo_names[k]) == 0)
				kind[d] = k;
		if (kind[d] < 0) {
			cs__yaml_at(diag, file, topo[d],
				    "unknown topology '%.64s' (Ring, Switch or "
				    "FullyConnected)",
				    t);
			goto out;
		}
		double c;
		if (!cs__yaml_number(npus[d], &c) || c < 1 || c > 1e6 || c != (double)(int64_t)c) {
			cs__yaml_at(diag, file, npus[d], "npus_count '%.64s' is not a count of NPUs",
				    (const char *)npus[d]->data.scalar.value);
			goto out;
		}
		count[d] = (int64_t)c;
		gpus *= count[d];
		if (!cs__yaml_number(bw[d], &gbs[d]) || !(gbs[d] > 0) || gbs[d] > 1e6) {
			cs__yaml_at(diag, file, bw[d], "bandwidth '%.64s' is not a positive GB/s",
				    (const char *)bw[d]->data.scalar.value);
			goto out;
		}
		if (!cs__yaml_number(lat[d], &ns[d]) || !(ns[d] >= 0) || ns[d] > 1e12) {
			cs__yaml_at(diag, file, lat[d], "latency '%.64s' is not a time in ns",
				    (const char *)lat[d]->data.scalar.value);
			goto out;
		}
	}
	if (gpus > 1 << 20) {
		cs__yaml_at(diag, file, npus[0], "%" PRId64 " NPUs in all, more than clustersim runs", gpus);
		goto out;
	}
	int rings = 0;
	for (int d = 0; d < nt; d++)
		rings += kind[d] == T_RING;
	if (rings == nt) { /* a torus of that shape, one pod */
		if (nt > 3) {
			cs__yaml_at(diag, file, topo[3], "a ring of %d dimensions; a torus has at most 3",
				    nt);
			goto out;
		}
		for (int d = 1; d < nt; d++)
			if (gbs[d] != gbs[0] || ns[d] != ns[0]) {
				cs__yaml_at(
					diag, file, gbs[d] != gbs[0] ? bw[d] : lat[d],
					"rings of different "
					"links: clustersim's torus has one bandwidth and latency on every "
					"dimension");
				goto out;
			}
		char shape[64] = "";
		for (int d = 0; d < nt; d++)
			snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%" PRId64,
				 d ? "x" : "", count[d]);
		int64_t gpn = gpus % 8 == 0 ? 8 : gpus;
		add_set(a, "cluster.gpus_per_node=%" PRId64, gpn);
		add_set(a, "cluster.nodes=%" PRId64, gpus / gpn);
		add_set(a, "cluster.topology=torus");
		add_set(a, "cluster.torus.shape=%s", shape);
		add_set(a, "cluster.torus.wrap=true");
		add_set(a, "cluster.torus.bandwidth=%.9g GiB/s", gbs[0]);
		add_set(a, "cluster.torus.latency=%.9g ns", ns[0]);
		st = CS_OK;
		goto out;
	}
	if (kind[0] == T_RING || nt > 2) {
		cs__yaml_at(
			diag, file, topo[nt > 2 ? 2 : 0],
			"%d dimensions of mixed topologies: "
			"clustersim's cluster is rings in every dimension (a torus), or a server's NVLink "
			"domain (Switch or FullyConnected) and a switched network (Switch)",
			nt);
		goto out;
	}
	if (nt == 2 && kind[1] != T_SWITCH) {
		cs__yaml_at(diag, file, topo[1],
			    "'%s' between servers: clustersim's network beyond the "
			    "server is switched; only Switch maps there",
			    topo_names[kind[1]]);
		goto out;
	}
	/* the NVLink domain: a switch's message crosses two links */
	add_set(a, "cluster.gpus_per_node=%" PRId64, count[0]);
	add_set(a, "cluster.nodes=%" PRId64, nt == 2 ? count[1] : 1);
	add_set(a, "cluster.scale_up.bandwidth=%.9g GiB/s", gbs[0]);
	add_set(a, "cluster.scale_up.latency=%.9g ns", kind[0] == T_SWITCH ? 2 * ns[0] : ns[0]);
	if (nt == 2) {
		add_set(a, "cluster.scale_out.nics_per_node=%" PRId64, count[0]);
		add_set(a, "cluster.scale_out.bandwidth=%.9g GiB/s", gbs[1]);
		add_set(a, "cluster.scale_out.latency=%.9g ns", 2 * ns[1]);
	}
	st = CS_OK;
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&yp);
	free(buf);
	return st;
}

/* The algorithm every entry of a list of implementations names, by
 * clustersim's name, or NULL. */
static const char *algorithm_of(json_t *list)
{
	static const struct {
		const char *astra, *cs;
	} names[] = {
		{ "ring", "ring" },
		{ "doubleBinaryTree", "tree" },
	};
	const char *all = NULL;
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		const char *got = NULL;
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
			if (json_is_string(v) && strcmp(json_string_value(v), names[k].astra) == 0)
				got = names[k].cs;
		if (!got || (all && strcmp(all, got) != 0))
			return NULL;
		all = got;
	}
	return all;
}

static cs_status read_system(const char *file, cs_chakra_astra *a, cs_diag *diag)
{
	json_t *root;
	cs_status rd = cs__chakra_json_load(file, CS_CHAKRA_ASTRA_MAX_BYTES, &root, diag);
	if (rd != CS_OK)
		return rd;
	if (!json_is_object(root)) {
		snprintf(diag->msg, sizeof diag->msg,
			 "%.700s: not an ASTRA-sim system file (an object of "
			 "its keys)",
			 file);
		json_decref(root);
		return CS_ERR_INPUT;
	}
	const char *key;
	json_t *v;
	const char *algo = NULL;
	json_object_foreach(root, key, v)
	{
		if (strcmp(key, "all-reduce-implementation") == 0) {
			algo = json_is_array(v) ? algorithm_of(v) : NULL;
			if (!algo) {
				snprintf(diag->msg, sizeof diag->msg,
					 "%.600s: 'all-reduce-implementation': "
					 "clustersim runs 'ring' or 'doubleBinaryTree' (NCCL's ring and "
					 "tree), "
					 "the same in every dimension",
					 file);
				json_decref(root);
				return CS_ERR_INPUT;
			}
		} else if (strcmp(key, "all-gather-implementation") == 0 ||
			   strcmp(key, "reduce-scatter-implementation") == 0 ||
			   strcmp(key, "all-to-all-implementation") == 0) {
			/* NCCL's: rings for these two, pairwise for all-to-all */
			if (!json_is_array(v) || !algorithm_of(v) || strcmp(algorithm_of(v), "ring") != 0)
				add_note(a, key);
		} else {
			/* chunking, scheduling, memory bandwidth, roofline, custom
			 * collectives (their own traces are what run-chakra runs) */
			add_note(a, key);
		}
	}
	if (algo)
		add_set(a, "collectives.algorithm=%s", algo);
	json_decref(root);
	return CS_OK;
}

cs_status cs_chakra_astra_read(const char *network, const char *system, cs_chakra_astra *out, cs_diag *diag)
{
	memset(out, 0, sizeof *out);
	cs_status st = network ? read_network(network, out, diag) : CS_OK;
	if (st == CS_OK && system)
		st = read_system(system, out, diag);
	return st;
}
