/*
 * stragglers.c - the scenario's "stragglers" list into cs_perturbation.
 *
 * Each entry names one target (gpu, node, ranks, tier or random) and what
 * changes: a compute time factor, or for links and tiers the fraction of
 * bandwidth kept and added latency. Ranges are checked against the cluster
 * in validate.c, once overrides may have changed its size.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "config/config_int.h"
#include "config/yaml_node.h"

typedef struct ctx {
	yaml_document_t *doc;
	const char *file;
	cs_diag *diag;
} ctx;

#define err(c, node, ...) cs__yaml_at((c)->diag, (c)->file, (node), __VA_ARGS__)

static const char *text(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static cs_status get_num(const ctx *c, const char *key, const yaml_node_t *n, double *out)
{
	if (!text(n) || !cs__parse_number(text(n), out))
		return err(c, n, "straggler '%s' expects a number, got %s", key,
			   text(n) ? text(n) : "a mapping or list");
	return CS_OK;
}

static cs_status get_index(const ctx *c, const char *key, const yaml_node_t *n, int64_t *out)
{
	double v;

	if (!text(n) || !cs__parse_number(text(n), &v) || v != floor(v) || strpbrk(text(n), ".eE"))
		return err(c, n, "straggler '%s' expects an integer, got '%.40s'", key,
			   text(n) ? text(n) : "a mapping or list");
	if (v < 0 || v > 9e15)
		return err(c, n, "straggler '%s' must be between 0 and 9e15, got '%.40s'", key, text(n));
	*out = (int64_t)v;
	return CS_OK;
}

static cs_status get_fraction(const ctx *c, const char *key, const yaml_node_t *n, double *out)
{
	cs_status st = get_num(c, key, n, out);

	if (st == CS_OK && (*out <= 0 || *out > 1))
		return err(c, n, "straggler '%s' must be in (0, 1], got '%.40s'", key, text(n));
	return st;
}

static int pick(const char *word, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(word, names[i]) == 0)
			return i;
	return -1;
}

static cs_status bad_name(const ctx *c, const yaml_node_t *n, const char *what, const char *const *names,
			  size_t count)
{
	const char *near = text(n) ? cs_suggest(text(n), names, count) : NULL;
	char body[300];

	if (near)
		snprintf(body, sizeof body, "unknown %s '%.40s' (did you mean '%s'?)", what, text(n), near);
	else
		snprintf(body, sizeof body, "unknown %s '%.40s'", what, text(n) ? text(n) : "");
	return err(c, n, "%s", body);
}

/* ---- random draws ------------------------------------------------------- */

static const char *const dist_names[] = { "normal", "lognormal", "gamma", "uniform", "exponential", NULL };
/* parameter names in p1, p2 order; "" for none; defaults NAN = required */
static const struct {
	const char *p1, *p2;
	double d1, d2;
} dist_params[] = {
	{ "mean", "stddev", 1.0, NAN }, { "mu", "sigma", 0.0, NAN }, { "shape", "scale", NAN, NAN },
	{ "low", "high", NAN, NAN },    { "mean", "", NAN, 0.0 },
};

static cs_status parse_random(const ctx *c, yaml_node_t *map, cs_perturbation *pt)
{
	yaml_node_t *dist = NULL, *p1 = NULL, *p2 = NULL;
	int d;

	if (map->type != YAML_MAPPING_NODE)
		return err(c, map,
			   "straggler 'random' must be a mapping with fraction and "
			   "distribution");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		if (k && text(k) && strcmp(text(k), "distribution") == 0)
			dist = yaml_document_get_node(c->doc, p->value);
	}
	if (!dist)
		return err(c, map, "straggler 'random' needs a 'distribution' (%s)",
			   "normal | lognormal | gamma | uniform | exponential");
	if (!text(dist) || (d = pick(text(dist), dist_names)) < 0)
		return bad_name(c, dist, "distribution", dist_names, 5);
	pt->dist = (cs_dist)(CS_DIST_NORMAL + d);
	pt->fraction = 0;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *name = k ? text(k) : NULL;
		cs_status st = CS_OK;
		if (!name)
			return err(c, k ? k : map, "keys must be plain names");
		if (strcmp(name, "distribution") == 0)
			continue;
		if (strcmp(name, "fraction") == 0)
			st = get_fraction(c, "fraction", v, &pt->fraction);
		else if (strcmp(name, dist_params[d].p1) == 0)
			p1 = v, st = get_num(c, name, v, &pt->p1);
		else if (dist_params[d].p2[0] && strcmp(name, dist_params[d].p2) == 0)
			p2 = v, st = get_num(c, name, v, &pt->p2);
		else {
			char expect[64];
			snprintf(expect, sizeof expect, "fraction, %s%s%s", dist_params[d].p1,
				 dist_params[d].p2[0] ? ", " : "", dist_params[d].p2);
			snprintf(c->diag->msg, sizeof c->diag->msg,
				 "%.300s:%d:%d: unknown key '%.40s' "
				 "for the '%s' distribution (expected %s)",
				 c->file, (int)k->start_mark.line + 1, (int)k->start_mark.column + 1, name,
				 dist_names[d], expect);
			return CS_ERR_INPUT;
		}
		if (st != CS_OK)
			return st;
	}
	if (pt->fraction == 0)
		return err(c, map, "straggler 'random' needs a 'fraction' in (0, 1]");
	if (!p1 && isnan(dist_params[d].d1))
		return err(c, map, "the '%s' distribution needs '%s'", dist_names[d], dist_params[d].p1);
	if (!p2 && isnan(dist_params[d].d2))
		return err(c, map, "the '%s' distribution needs '%s'", dist_names[d], dist_params[d].p2);
	if (!p1)
		pt->p1 = dist_params[d].d1;
	if (!p2)
		pt->p2 = dist_params[d].d2;
	/* spread parameters must be positive; uniform draws must stay positive */
	if ((pt->dist == CS_DIST_NORMAL || pt->dist == CS_DIST_LOGNORMAL) && pt->p2 <= 0)
		return err(c, p2, "'%s' must be positive", dist_params[d].p2);
	if ((pt->dist == CS_DIST_GAMMA || pt->dist == CS_DIST_EXPONENTIAL) && pt->p1 <= 0)
		return err(c, p1, "'%s' must be positive", dist_params[d].p1);
	if (pt->dist == CS_DIST_GAMMA && pt->p2 <= 0)
		return err(c, p2, "'scale' must be positive");
	if (pt->dist == CS_DIST_UNIFORM && (pt->p1 <= 0 || pt->p2 <= pt->p1))
		return err(c, map, "the 'uniform' distribution needs 0 < low < high");
	return CS_OK;
}

/* ---- one entry ----------------------------------------------------------- */

static const char *const entry_keys[] = { "gpu",       "node",       "ranks", "compute", "link",
					  "bandwidth", "latency",    "tier",  "random",  "seed",
					  "per_step",  "start_step", NULL };
/* The names of cs_tier, in its order; a GPU's own link is one of the first two. */
static const char *const tier_names[] = { "nvlink", "nic", "leaf", "pod", NULL };
static const char *const link_names[] = { "nvlink", "nic", NULL };

const char *cs_tier_name(cs_tier t) { return (unsigned)t < CS_TIERS ? tier_names[t] : "?"; }

static cs_status parse_entry(const ctx *c, yaml_node_t *item, cs_perturbation *pt)
{
	yaml_node_pair_t *start = item->data.mapping.pairs.start;
	int targets = 0, link = -1;
	bool has_compute = false, has_bw = false, has_lat = false, has_per_step = false;
	char msg[300];

	memset(pt, 0, sizeof *pt);
	pt->compute = 1.0;
	pt->bandwidth = 1.0;
	pt->line = (int)item->start_mark.line + 1;
	pt->col = (int)item->start_mark.column + 1;
	for (yaml_node_pair_t *p = start; p < item->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *val = yaml_document_get_node(c->doc, p->value);
		const char *name = k ? text(k) : NULL;
		cs_status st = CS_OK;
		int which;
		if (!name)
			return err(c, k ? k : item, "keys must be plain names");
		for (yaml_node_pair_t *q = start; q < p; q++) {
			yaml_node_t *o = yaml_document_get_node(c->doc, q->key);
			if (o && text(o) && strcmp(text(o), name) == 0)
				return err(c, k, "duplicate key '%.40s' in a straggler", name);
		}
		which = pick(name, entry_keys);
		if (which < 0)
			return bad_name(c, k, "straggler key", entry_keys, 12);
		if (which <= 2 || which == 7 || which == 8)
			targets++;
		switch (which) {
		case 0:
			pt->target = CS_PERT_GPU;
			st = get_index(c, name, val, &pt->first);
			pt->last = pt->first;
			break;
		case 1:
			pt->target = CS_PERT_NODE;
			st = get_index(c, name, val, &pt->first);
			pt->last = pt->first;
			break;
		case 2:
			pt->target = CS_PERT_RANKS;
			if (val->type != YAML_SEQUENCE_NODE ||
			    val->data.sequence.items.top - val->data.sequence.items.start != 2)
				return err(c, val, "straggler 'ranks' expects a list [first, last]");
			st = get_index(c, name,
				       yaml_document_get_node(c->doc, val->data.sequence.items.start[0]),
				       &pt->first);
			if (st == CS_OK)
				st = get_index(
					c, name,
					yaml_document_get_node(c->doc, val->data.sequence.items.start[1]),
					&pt->last);
			if (st == CS_OK && pt->last < pt->first)
				return err(c, val,
					   "straggler 'ranks' must be [first, last] with first <= last");
			break;
		case 3:
			has_compute = true;
			st = get_num(c, name, val, &pt->compute);
			/* a straggler is slower; a faster GPU would run past its peak and
			 * report an MFU above what the hardware can give */
			if (st == CS_OK && !(pt->compute >= 1))
				return err(c, val,
					   "straggler 'compute' must be at least 1 (a straggler "
					   "is slower), got '%.40s'",
					   text(val));
			break;
		case 4:
			if (!text(val) || (link = pick(text(val), link_names)) < 0)
				return bad_name(c, val, "link", link_names, 2);
			break;
		case 5:
			has_bw = true;
			st = get_fraction(c, name, val, &pt->bandwidth);
			break;
		case 6:
			has_lat = true;
			if (!text(val) ||
			    cs_parse_time(text(val), &pt->extra_latency_ns, msg, sizeof msg) != CS_OK)
				return err(c, val, "straggler 'latency': %s",
					   text(val) ? msg : "expects a time");
			break;
		case 7: {
			int t;
			pt->target = CS_PERT_TIER;
			if (!text(val) || (t = pick(text(val), tier_names)) < 0)
				return bad_name(c, val, "tier", tier_names, CS_TIERS);
			pt->tier = (cs_tier)t;
			break;
		}
		case 8:
			pt->target = CS_PERT_RANDOM;
			st = parse_random(c, val, pt);
			break;
		case 9: {
			int64_t seed;
			st = get_index(c, name, val, &seed);
			pt->seed = (uint64_t)seed;
			break;
		}
		case 10:
			has_per_step = true;
			if (!text(val) || (strcasecmp(text(val), "true") && strcasecmp(text(val), "false")))
				return err(c, val, "straggler 'per_step' expects true or false, got '%.40s'",
					   text(val) ? text(val) : "");
			pt->per_step = strcasecmp(text(val), "true") == 0;
			break;
		default: st = get_index(c, name, val, &pt->start_step); break;
		}
		if (st != CS_OK)
			return st;
	}
	if (targets != 1)
		return err(c, item,
			   "a straggler names exactly one target: gpu, node, ranks, tier or "
			   "random");
	if (link >= 0) {
		if (pt->target != CS_PERT_GPU)
			return err(c, item, "straggler 'link' applies to one 'gpu'");
		pt->target = CS_PERT_LINK;
		pt->tier = (cs_tier)link; /* link_names are the first of tier_names */
	}
	if (pt->target == CS_PERT_LINK || pt->target == CS_PERT_TIER) {
		if (has_compute)
			return err(c, item,
				   "straggler 'compute' applies to gpu, node, ranks or random, "
				   "not to links");
		if (!has_bw && !has_lat)
			return err(c, item, "a link or tier straggler needs 'bandwidth' or 'latency'");
	} else {
		if (has_bw || has_lat)
			return err(c, item,
				   "'bandwidth' and 'latency' need 'link' (nic or nvlink) or "
				   "'tier'");
		if (pt->target == CS_PERT_RANDOM && has_compute)
			return err(c, item, "a random straggler draws its compute factor; drop 'compute'");
		if (pt->target != CS_PERT_RANDOM && !has_compute)
			return err(c, item, "a gpu, node or ranks straggler needs 'compute'");
	}
	if (has_per_step && pt->target != CS_PERT_RANDOM)
		return err(c, item, "straggler 'per_step' applies to random stragglers");
	return CS_OK;
}

cs_status cs__config_stragglers(cs_scenario *sc, yaml_document_t *doc, yaml_node_t *list, const char *file,
				cs_diag *diag)
{
	ctx c = { doc, file, diag };
	int n = 0;

	for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(doc, *it);
		cs_status st;
		if (!item)
			continue;
		if (n == CS_MAX_PERTURBATIONS) {
			char lim[16];
			snprintf(lim, sizeof lim, "%d", CS_MAX_PERTURBATIONS);
			return err(&c, item, "more than %s stragglers (the limit is %s)", lim, lim);
		}
		if (item->type != YAML_MAPPING_NODE)
			return err(&c, item, "each straggler must be a mapping, not a %s",
				   item->type == YAML_SEQUENCE_NODE ? "list" : "scalar");
		if ((st = parse_entry(&c, item, &sc->perturbations[n])) != CS_OK)
			return st;
		n++;
	}
	sc->n_perturbations = n;
	return CS_OK;
}
