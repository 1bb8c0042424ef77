/*
 * runner_path.c - the runner's critical path: each counter's path and each
 * op in flight's, read in place or from the collective that moved them,
 * copied only when they change, and the run's longest.
 */
#include "run/runner_int.h"

/* ---- critical path ---------------------------------------------------- */

/* The slot of local's op in flight on `stream` once it has a copy of its own. */
static cs_path *own_flying_path(const cs_runner *r, int64_t local, int stream)
{
	return &r->shared.paths[local * CS__PATHS_PER_RANK + CS_COUNTERS + stream];
}

/* The whole path x names, into *tmp. */
static const cs_path *path_ref_expand(const cs_runner *r, int64_t local, const cs__path_ref *x, cs_path *tmp)
{
	const cs__comm_table *t = &r->shared.comm[x->kind][x->stream];
	int64_t at = 2 * (int64_t)x->gi + x->parity;
	*tmp = t->paths[at];
	cs_path_transfer(tmp, t->xfers[at], x->comm, x->coll, t->shapes[x->gi].tier,
			 cs__run_rank_of(r, local), x->end);
	if (x->add)
		cs_path_compute(tmp, x->add);
	return tmp;
}

/* The collective that moved counter c of rs last, as a reference (the
 * collective is the last op done on stream c, its instance the rank's). */
static void path_ref_of(const cs_runner *r, int64_t local, const cs__rank *rs, int c, cs__path_ref *x)
{
	/* field by field: a compound literal is built on the stack in parts
	 * and read back whole, which the store buffer cannot forward */
	const cs_op *op = &r->shared.tmpls[rs->tmpl].ops[c][rs->cnt[c] - 1];
	x->gi = rs->gidx[op->group];
	x->kind = op->group;
	x->stream = (uint8_t)c;
	x->parity = (uint8_t)((rs->parity >> c) & 1);
	x->comm = op->comm;
	x->coll = op->coll;
	x->end = r->shared.times[local].done_at[c];
	x->add = 0;
}

/* Counter c's path: in place, or worked out into *tmp (never the slot)
 * from the collective it extends. */
static const cs_path *path_read(const cs_runner *r, int64_t local, int c, cs_path *tmp)
{
	const cs__rank *rs = &r->shared.ranks[local];
	if (c == CS_STREAM_COMPUTE && rs->comp_path_ref)
		return path_ref_expand(r, local, &r->shared.path_refs[local], tmp);
	if (!(rs->coll_paths & (1u << c)))
		return &r->shared.paths[local * CS__PATHS_PER_RANK + c];
	cs__path_ref x;
	path_ref_of(r, local, rs, c, &x);
	return path_ref_expand(r, local, &x, tmp);
}

const cs_path *cs__run_flying_path(const cs_runner *r, int64_t local, int stream, cs_path *tmp)
{
	int ref = r->shared.ranks[local].path_from[stream];
	return ref != CS__PATH_OWN ? path_read(r, local, ref, tmp) : own_flying_path(r, local, stream);
}

/* Give the ops in flight that read counter c's path in place a copy. */
static void path_detach(cs_runner *r, int64_t local, cs__rank *rs, int c)
{
	for (unsigned b = rs->busy; b; b &= b - 1) {
		int s = __builtin_ctz(b);
		if (s != c && rs->path_from[s] == c) {
			cs_path *own = own_flying_path(r, local, s);
			const cs_path *p = path_read(r, local, c, own);
			if (p != own)
				*own = *p;
			rs->path_from[s] = CS__PATH_OWN;
		}
	}
}

/* Counter c's path, to write whole: the ops in flight that read it are
 * given a copy first. */
static cs_path *path_to_write(cs_runner *r, int64_t local, int c)
{
	cs__rank *rs = &r->shared.ranks[local];
	path_detach(r, local, rs, c);
	rs->coll_paths &= (uint16_t) ~(1u << c);
	if (c == CS_STREAM_COMPUTE)
		rs->comp_path_ref = false;
	return &r->shared.paths[local * CS__PATHS_PER_RANK + c];
}

/* A kernel of d ns on the compute stream ends: when its path extends a
 * collective's, the compute counter names that collective (cs__path_ref)
 * instead of taking a copy. Returns whether it did. */
static bool compute_to_path_ref(cs_runner *r, int64_t local, cs__rank *rs, cs_time d)
{
	int c = CS_STREAM_COMPUTE, ref = rs->path_from[c];
	cs__path_ref *x = &r->shared.path_refs[local];
	bool own = ref == c && rs->comp_path_ref;
	if (!own && !(ref != CS__PATH_OWN && ref != c && (rs->coll_paths & (1u << ref))))
		return false;
	/* the ops in flight that read the compute counter's path in place
	 * take a copy before it changes */
	path_detach(r, local, rs, c);
	if (!own)
		path_ref_of(r, local, rs, ref, x);
	rs->coll_paths &= (uint16_t) ~(1u << c);
	x->add += d;
	rs->comp_path_ref = true;
	return true;
}

void cs__run_path_ref_arrive(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op)
{
	int64_t gi = rs->gidx[op->group];
	const cs__path_ref *x = &r->shared.path_refs[local];
	if (gi < 0 || x->kind != op->group || x->stream != s || x->gi != gi ||
	    x->parity != ((r->shared.comm[op->group][s].slots[gi].gen + 1) & 1))
		return;
	cs_path tmp;
	const cs_path *p = path_read(r, local, CS_STREAM_COMPUTE, &tmp);
	*path_to_write(r, local, CS_STREAM_COMPUTE) = *p;
}

/* Pipeline send `op` of local's stream s ends now: the receiver's mailbox
 * counter, when the receiver is simulated, takes the sender's path and the
 * transfer, before the send extends the sender's own. */
static void path_sent(cs_runner *r, int64_t local, int s, const cs_op *op, const cs__done *d, cs_time now)
{
	int64_t peer = r->shared.ranks[local].p2p_peer[op->to > 0]; /* set when the send started */
	if (!cs__run_simulated(r, peer))
		return;
	cs_path tmp;
	const cs_path *src = cs__run_flying_path(r, local, s, &tmp);
	cs_path *rp = path_to_write(r, cs__run_local_of(r, peer), op->to > 0 ? CS_MBOX_UP : CS_MBOX_DOWN);
	*rp = *src;
	cs_path_transfer(rp, d->xfer, CS_COMM_PP, CS_COLL_SEND_RECV, d->tier, peer, now);
}

void cs__run_complete_times(cs_runner *r, int64_t local, int s, const cs_op *op, const cs__done *d)
{
	cs__rank *rs = &r->shared.ranks[local];
	cs_time now = cs_sim_now(r->sim);
	if (r->shared.env.traced) {
		int64_t rank = cs__run_rank_of(r, local);
		if (r->shared.env.traced[rank])
			r->shared.env.on_span(r->shared.env.span_ctx, rank, s,
					      r->shared.times[local].started[s], now, op, d->xfer,
					      op->kind == CS_OP_COLL ? d->choice : NULL);
	}
	if (r->shared.paths) {
		if (op->kind == CS_OP_SEND)
			path_sent(r, local, s, op, d, now);
		if (op->kind == CS_OP_COLL) {
			/* read from the collective's from now on (path_read) */
			path_detach(r, local, rs, s);
			rs->coll_paths |= (uint16_t)(1u << s);
			rs->parity = (uint16_t)((rs->parity & ~(1u << s)) | (unsigned)(d->gen & 1) << s);
		} else if (!(op->kind == CS_OP_COMPUTE && s == CS_STREAM_COMPUTE &&
			     compute_to_path_ref(r, local, rs, now - r->shared.times[local].started[s]))) {
			cs_path tmp;
			const cs_path *src = cs__run_flying_path(r, local, s, &tmp);
			cs_path *p = path_to_write(r, local, s);
			if (src != p)
				*p = *src;
			if (op->kind == CS_OP_COMPUTE)
				cs_path_compute(p, now - r->shared.times[local].started[s]);
			else
				cs_path_transfer(p, d->xfer, CS_COMM_PP, CS_COLL_SEND_RECV, d->tier, p->rank,
						 now);
		}
	}
	r->shared.times[local].done_at[s] = now;
}

int cs_runner_critical_path(const cs_runner *r, cs_path *out)
{
	if (!r->shared.paths)
		return -1;
	int64_t best_l = -1;
	int best_c = 0;
	cs_time best = -1;
	for (int64_t l = 0; l < r->shared.nlocal; l++)
		for (int c = 0; c < CS_COUNTERS; c++)
			if (r->shared.times[l].done_at[c] > best) {
				best = r->shared.times[l].done_at[c];
				best_l = l;
				best_c = c;
			}
	if (best_l < 0)
		return -1;
	const cs_path *p = path_read(r, best_l, best_c, out);
	if (p != out)
		*out = *p;
	cs_path_finish(out);
	return 0;
}
