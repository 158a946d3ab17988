/*
 * The ring engine of the shared-memory collectives (shm_coll_impl.h): a
 * writer claims its slot once every rank is past its last use, fills it
 * (big payloads chunk by chunk) and posts it; readers wait for it, copy
 * out, and count the call done.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "collectives/shm_coll_impl.h"
#include "runtime/progress.h"
#include "runtime/world.h"
#include "transport/copy.h"
#include "transport/shm/cacheline.h"

/* rank's slot for the call ahead calls after the current one (ahead < depth) */
static struct slot *slot_at(const struct call *k, int rank, unsigned ahead)
{
    const struct ring *g = k->g;
    unsigned pos = g->pos + ahead;
    pos -= pos >= g->depth ? g->depth : 0;
    size_t idx = (size_t)rank * g->depth + pos;
    return (struct slot *)(g->at + idx * g->stride);
}

static struct slot *slot_of(const struct call *k, int rank)
{
    return slot_at(k, rank, 0);
}

static void idle_wait(unsigned *idle)
{
    if (bmpi_progress())
        *idle = 0;
    else
        bmpi_progress_idle(idle);
}

/* Until every rank has finished the first need calls of the ring. */
void shmc_await_done(const struct call *k, uint64_t need)
{
    struct ring *g = k->g;
    unsigned idle = 0;
    while (g->min_done < need) {
        uint64_t m = UINT64_MAX;
        for (int i = 0; i < k->p; i++) {
            uint64_t d = __atomic_load_n(shmc_done_of(k, i), __ATOMIC_ACQUIRE);
            m = d < m ? d : m;
        }
        g->min_done = m;
        if (m < need)
            idle_wait(&idle);
    }
}

/* This rank's slot for the call ahead of the current one (0: the current
 * one), once every rank is done with its previous use. */
struct slot *shmc_claim_ahead(const struct call *k, unsigned ahead)
{
    uint64_t n = k->g->n + ahead;
    if (n >= k->g->depth)
        shmc_await_done(k, n - k->g->depth + 1);
    return slot_at(k, k->me, ahead);
}

/* Takes the first bytes of this rank's next small slot into its core's
 * cache for writing while it waits for the others: the lines are still
 * shared with the readers of its use a ring's depth ago, and otherwise
 * the next call's first store waits for them to be invalidated (cldemote,
 * which would push them to the readers, is a no-op on AMD). At 2 ranks
 * it made 8-32 B alltoall, allgather, bcast and reduce and 128 B bcast
 * and reduce faster, and allreduce a little. Where every rank writes and
 * reads slots of several lines (from 64 B) it cost, and still did with
 * the readers pulling their lines, so those calls do without
 * (docs/collectives.md, "Why the constants are what they are"). */
static void claim_lines(const struct slot *s, size_t bytes)
{
    for (size_t l = 0; l < bytes; l += LINE)
        bmpi_cacheline_claim((const char *)s + l);
}

/* Publishes the slot; a small one is also pushed towards the readers'
 * cores, but not in the medium ring, which its size does that for:
 * demoting there too only cost the writer, and made 2-rank reduces of
 * 256 B-1 KiB slower (docs/collectives.md, "Why the constants are what
 * they are"). */
void shmc_publish(const struct call *k, struct slot *s, size_t bytes, bool ref)
{
    s->bytes = bytes;
    s->ref = ref;
    __atomic_store_n(&s->seq, k->g->n + 1, __ATOMIC_RELEASE);
    if (bytes <= DEMOTE_MAX && k->g->id != MEDIUM)
        bmpi_cacheline_demote(s, SLOT_HDR + bytes);
    if ((k->g->id == SMALL || k->g->id == STREAM) && (SLOT_HDR + bytes <= LINE || shmc_streams(k)))
        claim_lines(slot_at(k, k->me, 1), SLOT_HDR + bytes);
}

/* The tag of the current call in a slot's ready word. A stale word is from
 * a call a multiple of the ring's depth earlier, so 32 bits tell them apart
 * whatever the count. */
static uint64_t ready_tag(const struct call *k)
{
    return (uint64_t)(uint32_t)(k->g->n + 1) << 32;
}

/* Polls of a slot's seq (asking for its other lines each time, as
 * await_bytes does) between two trips through the progress engine, which
 * take longer than a line takes to cross: at 2 ranks it made barrier,
 * 8-32 B allreduce and 8-256 B allgather and alltoall faster, 8 to 512
 * polls alike; bcast and reduce, whose readers mostly find the slot
 * posted, unchanged (docs/collectives.md, "Waiting" and "Why the
 * constants are what they are"). */
#define SEQ_POLLS 16

/* Whether s's seq becomes want within SEQ_POLLS polls. Not on a node with
 * more ranks than cores, where the rank waited for may need this core. */
static bool seq_arrives(const struct slot *s, uint64_t want, size_t pull)
{
    if (bmpi_world.oversubscribed)
        return false;
    for (unsigned i = 0; i < SEQ_POLLS; i++) {
        bmpi_cpu_relax();
        bmpi_cacheline_pull((const char *)s + LINE, pull);
        if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == want)
            return true;
    }
    return false;
}

/* Rank w's slot of the current call once it holds at least upto bytes of
 * the payload, or all of it (s->bytes is valid then). */
const struct slot *shmc_await_bytes(const struct call *k, int w, size_t upto)
{
    const struct slot *s = slot_of(k, w);
    uint64_t want = k->g->n + 1, tag = ready_tag(k);
    unsigned idle = 0;
    /* A reader that finds the slot not yet posted asks for the rest of its
     * lines at every look at seq, so that they come over with seq's, not
     * one round trip after it (faster for 2 ranks exchanging 64-256 B;
     * docs/collectives.md, "Rings"). Not at the first look: a slot posted
     * already, as a streaming bcast root's mostly is, would only pay for
     * the asking. */
    for (size_t pull = 0;; pull = k->pull) {
        bmpi_cacheline_pull((const char *)s + LINE, pull);
        if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == want)
            return s;
        uint64_t r = __atomic_load_n(&s->ready, __ATOMIC_ACQUIRE);
        if ((r & ~(uint64_t)UINT32_MAX) == tag && (r & UINT32_MAX) >= upto)
            return s;
        if (!seq_arrives(s, want, k->pull))
            idle_wait(&idle);
    }
}

static void pack(void *dst, const void *buf, size_t count, const struct bmpi_datatype *dt)
{
    if (bmpi_dt_is_contig(dt))
        bmpi_copy(dst, (const char *)buf + bmpi_dt_true_lb(dt), count * bmpi_dt_size(dt));
    else
        bmpi_dt_pack_all(buf, count, dt, dst);
}

/* Bytes [from, to) of a contiguous buffer into the same place of slot s,
 * chunk by chunk, each published in the ready word. */
static void copy_published(const struct call *k, struct slot *s, const char *src, size_t from,
                           size_t to)
{
    uint64_t tag = ready_tag(k);
    for (size_t off = from; off < to; off += CHUNK) {
        size_t len = to - off < CHUNK ? to - off : CHUNK;
        bmpi_copy(s->data + off, src + off, len);
        __atomic_store_n(&s->ready, tag | (off + len), __ATOMIC_RELEASE);
    }
}

/* Bytes [from, from + bytes) of (buf, count, dt) into the slot, chunk by
 * chunk, each published in the ready word. */
static void pack_chunks(const struct call *k, struct slot *s, const void *buf, size_t count,
                        const struct bmpi_datatype *dt, size_t from, size_t bytes)
{
    if (bmpi_dt_is_contig(dt)) {
        copy_published(k, s, (const char *)buf + bmpi_dt_true_lb(dt) + from, 0, bytes);
        return;
    }
    uint64_t tag = ready_tag(k);
    struct bmpi_dt_cursor cur;
    bmpi_dt_cursor_init(&cur, (void *)(uintptr_t)buf, count, dt);
    bmpi_dt_cursor_seek(&cur, from);
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t len = bytes - off < CHUNK ? bytes - off : CHUNK;
        bmpi_dt_pack(&cur, s->data + off, len);
        __atomic_store_n(&s->ready, tag | (off + len), __ATOMIC_RELEASE);
    }
}

/* Writes bytes [from, from + bytes) of this rank's data into its slot and
 * posts it. */
void shmc_contribute_range(const struct call *k, const void *buf, size_t count,
                           const struct bmpi_datatype *dt, size_t from, size_t bytes)
{
    struct slot *s = shmc_claim(k);
    s->bytes = bytes;
    pack_chunks(k, s, buf, count, dt, from, bytes);
    shmc_post(k, s, bytes);
}

/* Writes this rank's data into its slot and posts it. */
void shmc_contribute(const struct call *k, const void *buf, size_t count,
                     const struct bmpi_datatype *dt)
{
    size_t bytes = count * bmpi_dt_size(dt);
    if (bytes > CHUNK) {
        shmc_contribute_range(k, buf, count, dt, 0, bytes);
        return;
    }
    struct slot *s = shmc_claim(k);
    s->bytes = bytes;
    pack(s->data, buf, count, dt);
    shmc_post(k, s, bytes);
}

/* A contiguous contribution to a reduction in two phases, but for bytes
 * [skip_lo, skip_hi): the segment this rank folds itself, reading it from
 * its own buffer, so nobody reads it from the slot. */
void shmc_contribute_but(const struct call *k, const char *own, size_t bytes, size_t skip_lo,
                         size_t skip_hi)
{
    struct slot *s = shmc_claim(k);
    s->bytes = bytes;
    copy_published(k, s, own, 0, skip_lo);
    copy_published(k, s, own, skip_hi, bytes);
    shmc_post(k, s, bytes);
}

/* Copies len bytes of data into (buf, count, dt). */
int shmc_unpack(const struct call *k, void *buf, size_t count, const struct bmpi_datatype *dt,
                const char *data, size_t len)
{
    size_t room = count * bmpi_dt_size(dt);
    size_t n = len < room ? len : room;
    if (bmpi_dt_is_contig(dt)) {
        bmpi_cacheline_copy_in((char *)buf + bmpi_dt_true_lb(dt), data, n, k->r->fsrm);
    } else {
        struct bmpi_dt_cursor cur;
        bmpi_dt_cursor_init(&cur, buf, count, dt);
        bmpi_dt_unpack(&cur, data, n);
    }
    return shmc_check_fit(len, room);
}

/* Rank w's payload into (buf, count, dt) from byte from on, each chunk as
 * soon as w has written it. */
int shmc_unpack_chunks(const struct call *k, int w, void *buf, size_t count,
                       const struct bmpi_datatype *dt, size_t from)
{
    size_t room = count * bmpi_dt_size(dt) - from;
    /* a receiver of at most one chunk waits for the whole payload */
    const struct slot *s = room <= CHUNK ? shmc_await(k, w) : shmc_await_bytes(k, w, CHUNK);
    if (room <= CHUNK && from == 0)
        return shmc_unpack(k, buf, count, dt, s->data, s->bytes);
    size_t len = s->bytes, n = len < room ? len : room;
    char *dst = (char *)buf + bmpi_dt_true_lb(dt) + from;
    struct bmpi_dt_cursor cur;
    bool contig = bmpi_dt_is_contig(dt);
    if (!contig) {
        bmpi_dt_cursor_init(&cur, buf, count, dt);
        bmpi_dt_cursor_seek(&cur, from);
    }
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t clen = n - off < CHUNK ? n - off : CHUNK;
        shmc_await_bytes(k, w, off + clen);
        if (contig)
            bmpi_cacheline_copy_in(dst + off, s->data + off, clen, k->r->fsrm);
        else
            bmpi_dt_unpack(&cur, s->data + off, clen);
    }
    return shmc_check_fit(len, room);
}
