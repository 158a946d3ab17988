/*
 * Small Puts, Accumulates and Gets gathered into one message per target
 * (runtime/rma_batch.c, docs/rma.md "Small operations gathered"). bmpi
 * gathers each MPI_Put and MPI_Accumulate of at most BMPI_RMA_BATCH bytes
 * (and records each such MPI_Get) to a target reached by message in a
 * buffer per target, sent when the next one does not fit, when another
 * kind of operation goes to that target, or when a synchronization waits
 * for the target; the target answers the Gets' data in one message. The
 * data of a Put or Accumulate from 1 KiB stays in the caller's buffer
 * until the batch goes: each epoch of the storm below rewrites the
 * origin buffers of the one before, so data left there past the
 * synchronization that completes it would arrive changed.
 * Plain MPI only (test/rma/README), so the program runs against MPICH and
 * Open MPI too.
 *
 * Window flavors: Win_create over mmap'd memory (outside bmpi's shared
 * heap, so the peers never map it: reached by the shm transport's single
 * copy or over ofi, NET), Win_allocate (mapped by the ranks of a node,
 * DIRECT; the reference) and Win_create_dynamic (active messages to every
 * other rank, AM). For each flavor and each synchronization (fence, lock
 * + flush, lock_all + flush_all, PSCW), every rank runs on every rank:
 *
 *  1. storm: in a region of its own at each target, thousands of small
 *     Puts to distinct bytes, issued in random order and interleaved over
 *     the targets: contiguous, to vector target types of 40 and 100
 *     blocks (many segments in one gathered record), from a vector origin
 *     type, both; Accumulates (SUM over a strided target, REPLACE); among
 *     the first quarter large Puts and Gets at and beside bmpi's bounds
 *     (8 KiB Puts and 16 KiB Gets in passive epochs, 32 KiB in fence and
 *     PSCW epochs across nodes) and Accumulates of 1028 and 16384 bytes,
 *     on dynamic windows a Put of 2100 one-byte blocks (too many
 *     segments for one message), Gets of another part of
 *     the target (gathered with the Puts when small), and in passive
 *     epochs request forms, waited for before the flush with their
 *     buffers overwritten at once. Then the flush (lock modes: Gets read
 *     back what the first part put), then the rest, small Puts,
 *     Accumulates and Gets (several full buffers per target).
 *     The target checks every byte of each region after the epoch, the
 *     bytes between operations included; the origin checks its Gets.
 *  2. accumulate ordering: to one element of each target, rounds of
 *     Accumulate REPLACE and SUM (gathered) interleaved with Fetch_and_op
 *     and Get_accumulate (never gathered; over ofi they may take the
 *     transport's atomics) and, in passive epochs, Raccumulate: every
 *     value fetched must show each earlier accumulate of the same origin
 *     applied, as the default accumulate_ordering demands.
 *  3. atomicity: every rank adds to a counter on every rank by
 *     Accumulate(SUM) and Fetch_and_op(SUM) at once; the final values
 *     are checked, the values fetched are distinct, and each origin's
 *     grow by at least its own adds between two of them (ordering again).
 * And on the dynamic window, with MPI_ERRORS_RETURN: a small Put, a
 * small Accumulate and a small Get to memory the target never attached,
 * between good Puts, under lock + flush: the flush (or the unlock) answers
 * MPI_ERR_RMA_RANGE, the good Puts land, the stray memory is untouched,
 * and the next epoch works. The standard calls such an access erroneous
 * (what happens is up to the implementation), so with
 * RMA_ERRORS_SURVEY=1 (test/rma/validate-with-mpich.sh) the answers are
 * printed and not checked.
 */
#include "rma_util.h"

#include <limits.h>
#include <stdbool.h>
#include <sys/mman.h>

/* ---- layout ------------------------------------------------------------------ */

/* Window bytes (disp_unit 1): the read zone the Gets of the storm read,
 * then one storm region per origin, one slot of 4 longs per origin for
 * the ordering rounds, the counter. */
#define READ_ZONE 40960
/* bytes of one operation's data at most (the largest Put) */
#define DATA_MAX 40960
#define SLOT_LONGS 4
#define RESULT_SLOT 256 /* bytes of a small Get or a read-back at most */

enum flavor { FL_CREATE, FL_ALLOCATE, FL_DYNAMIC, FL_COUNT };
static const char *const flavor_name[FL_COUNT] = {"Win_create", "Win_allocate", "Win_create_dynamic"};

enum sync { SY_FENCE, SY_LOCK, SY_LOCK_ALL, SY_PSCW, SY_COUNT };
static const char *const sync_name[SY_COUNT] = {"fence", "lock + flush", "lock_all + flush_all", "PSCW"};

static bool passive(enum sync s) { return s == SY_LOCK || s == SY_LOCK_ALL; }

/* Sizes for this many ranks: fewer operations per target the more
 * targets there are, so that a run stays short on a small machine. */
struct params {
    int first, small; /* storm operations per target: mixed part, small-only part */
    size_t region;    /* bytes of one origin's storm region */
    int rounds;       /* ordering rounds per target */
    int adds;         /* counter iterations per target */
    size_t slots_at, counter_at, bytes;
};

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static struct params params_for(int size)
{
    struct params p;
    p.small = clamp(9000 / size, 1100, 3000);
    p.first = p.small / 4;
    /* room for the target spans drawn: some 160 bytes per mixed operation
     * on average, 56 per small one, 144 KiB for the large Puts and
     * Accumulates (plan_make stops early should a draw not fit) */
    p.region = ((size_t)p.first * 160 + 144 * 1024 + (size_t)p.small * 56 + 4095) & ~(size_t)4095;
    p.rounds = clamp(96 / size, 8, 48);
    p.adds = clamp(160 / size, 12, 80);
    p.slots_at = READ_ZONE + (size_t)size * p.region;
    p.counter_at = p.slots_at + (size_t)size * SLOT_LONGS * sizeof(long);
    p.bytes = p.counter_at + 64;
    return p;
}

/* ---- the window ------------------------------------------------------------------ */

struct window {
    enum flavor flavor;
    MPI_Win win;
    unsigned char *mem; /* this rank's window memory */
    size_t mapped;      /* bytes mmap'd at mem (create, dynamic) */
    MPI_Aint *base;     /* per target: the displacement of its byte 0 (dynamic: its address) */
    MPI_Aint *stray;    /* dynamic: per target, the address of memory it never attached */
    unsigned char *stray_mem;
    MPI_Group all;
};

#define STRAY_BYTES 64
#define STRAY_BYTE 0x5a

static void *map_bytes(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu bytes failed", n);
    return p;
}

static void window_open(struct window *w, enum flavor fl, const struct params *p)
{
    *w = (struct window){.flavor = fl};
    w->base = calloc((size_t)tu_size, sizeof *w->base);
    w->stray = calloc((size_t)tu_size, sizeof *w->stray);
    CHECK(w->base && w->stray, "out of memory");
    MPI_Aint bytes = (MPI_Aint)p->bytes;
    switch (fl) {
    case FL_CREATE:
        w->mapped = p->bytes;
        w->mem = map_bytes(w->mapped);
        MPICHK(MPI_Win_create(w->mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case FL_ALLOCATE:
        MPICHK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win));
        break;
    default: {
        w->mapped = p->bytes;
        w->mem = map_bytes(w->mapped);
        w->stray_mem = malloc(STRAY_BYTES);
        CHECK(w->stray_mem, "out of memory");
        memset(w->stray_mem, STRAY_BYTE, STRAY_BYTES);
        MPICHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        MPICHK(MPI_Win_attach(w->win, w->mem, bytes));
        MPI_Aint mine, stray;
        MPICHK(MPI_Get_address(w->mem, &mine));
        MPICHK(MPI_Get_address(w->stray_mem, &stray));
        MPICHK(MPI_Allgather(&mine, 1, MPI_AINT, w->base, 1, MPI_AINT, MPI_COMM_WORLD));
        MPICHK(MPI_Allgather(&stray, 1, MPI_AINT, w->stray, 1, MPI_AINT, MPI_COMM_WORLD));
        break;
    }
    }
    rt_win_errors_return(w->win);
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &w->all));
}

static void window_close(struct window *w)
{
    if (w->flavor == FL_DYNAMIC)
        MPICHK(MPI_Win_detach(w->win, w->mem));
    MPICHK(MPI_Win_free(&w->win));
    if (w->mapped)
        munmap(w->mem, w->mapped);
    free(w->stray_mem);
    free(w->base);
    free(w->stray);
    MPICHK(MPI_Group_free(&w->all));
}

/* Displacement of byte off of target's window memory. */
static MPI_Aint disp_of(const struct window *w, int target, size_t off)
{
    return MPI_Aint_add(w->base[target], (MPI_Aint)off);
}

static void epoch_open(const struct window *w, enum sync s)
{
    switch (s) {
    case SY_FENCE:
        MPICHK(MPI_Win_fence(0, w->win));
        break;
    case SY_LOCK_ALL:
        MPICHK(MPI_Win_lock_all(0, w->win));
        break;
    case SY_PSCW:
        MPICHK(MPI_Win_post(w->all, 0, w->win));
        MPICHK(MPI_Win_start(w->all, 0, w->win));
        break;
    default: /* SY_LOCK: one target at a time, by the caller */
        break;
    }
}

static void epoch_close(const struct window *w, enum sync s)
{
    switch (s) {
    case SY_FENCE:
        MPICHK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));
        break;
    case SY_LOCK_ALL:
        MPICHK(MPI_Win_unlock_all(w->win));
        break;
    case SY_PSCW:
        MPICHK(MPI_Win_complete(w->win));
        MPICHK(MPI_Win_wait(w->win));
        break;
    default:
        break;
    }
    /* every origin is done with this rank's memory */
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Before an epoch: this rank's memory reset, then nobody starts before
 * everybody has. */
static void reset_done(void) { MPICHK(MPI_Barrier(MPI_COMM_WORLD)); }

/* The k-th target of this rank: the others in turn, itself last. */
static int target_at(int k) { return (tu_rank + 1 + k) % tu_size; }

/* ---- 1. storm ------------------------------------------------------------------ */

/* A layout in bytes: blocks of blocklen, stride apart. */
struct shape {
    int blocks, blocklen, stride;
};

static const struct shape SH_TVEC = {40, 4, 12};      /* target vector: 40 segments */
static const struct shape SH_TFINE = {100, 1, 3};     /* target vector: 100 one-byte segments */
static const struct shape SH_OVEC = {20, 8, 16};      /* origin vector */
static const struct shape SH_AVEC = {8, 4, 8};        /* every other unsigned */
/* Small, but more segments than one message holds (at 16 bytes each in
 * 32 KiB): sent alone. Only to dynamic windows (AM: messages of 16
 * segments): to a Win_create window over ofi it is one transport put per
 * byte, which libfabric's shm provider takes milliseconds each for when
 * the ranks outnumber the cores. */
static const struct shape SH_MANYSEG = {2100, 1, 2};

static struct shape contiguous(uint32_t n) { return (struct shape){1, (int)n, (int)n}; }
static size_t span(struct shape s) { return (size_t)(s.blocks - 1) * (size_t)s.stride + (size_t)s.blocklen; }

struct types {
    MPI_Datatype tvec, tfine, ovec, avec, manyseg;
    MPI_Datatype lstride; /* longs 0 and 2 (ordering rounds) */
};

static MPI_Datatype vector_of(struct shape s, MPI_Datatype base, int unit)
{
    MPI_Datatype t;
    MPICHK(MPI_Type_vector(s.blocks, s.blocklen / unit, s.stride / unit, base, &t));
    MPICHK(MPI_Type_commit(&t));
    return t;
}

static void types_make(struct types *ty)
{
    ty->tvec = vector_of(SH_TVEC, MPI_BYTE, 1);
    ty->tfine = vector_of(SH_TFINE, MPI_BYTE, 1);
    ty->ovec = vector_of(SH_OVEC, MPI_BYTE, 1);
    ty->avec = vector_of(SH_AVEC, MPI_UNSIGNED, (int)sizeof(unsigned));
    ty->manyseg = vector_of(SH_MANYSEG, MPI_BYTE, 1);
    MPICHK(MPI_Type_vector(2, 1, 2, MPI_LONG, &ty->lstride));
    MPICHK(MPI_Type_commit(&ty->lstride));
}

static void types_free(struct types *ty)
{
    MPI_Datatype *all[] = {&ty->tvec, &ty->tfine, &ty->ovec, &ty->avec, &ty->manyseg, &ty->lstride};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPICHK(MPI_Type_free(all[i]));
}

enum kind {
    K_PUT,         /* contiguous both sides */
    K_PUT_TVEC,    /* to SH_TVEC */
    K_PUT_TFINE,   /* to SH_TFINE */
    K_PUT_OVEC,    /* from SH_OVEC */
    K_PUT_BOTH,    /* from SH_OVEC to SH_TVEC */
    K_PUT_MANYSEG, /* to SH_MANYSEG */
    K_ACC_SUM,     /* 8 unsigned, MPI_SUM, to SH_AVEC */
    K_ACC_REPLACE, /* 1 to 6 unsigned (the large ones: 257, 4096), MPI_REPLACE, contiguous */
    K_GET,         /* from the read zone, contiguous */
    K_GET_TVEC     /* from the read zone, SH_TVEC */
};

struct op {
    uint8_t kind;
    uint8_t request; /* the request form (passive epochs) */
    uint32_t at;     /* offset in the region; Gets: in the read zone */
    uint32_t bytes;  /* of data */
    uint32_t result; /* Gets and read-backs: where their bytes go in the origin's results */
};

static struct op op_of(enum kind kind, uint32_t bytes) { return (struct op){.kind = (uint8_t)kind, .bytes = bytes}; }

static bool is_get(const struct op *op) { return op->kind == K_GET || op->kind == K_GET_TVEC; }

/* After the flush of a passive epoch: read back some small contiguous
 * Puts of the first part (every fifth). */
static bool read_back(const struct op *op, int i)
{
    return op->kind == K_PUT && op->bytes <= RESULT_SLOT && i % 5 == 0;
}

static struct shape target_shape(const struct op *op)
{
    switch (op->kind) {
    case K_PUT_TVEC:
    case K_PUT_BOTH:
    case K_GET_TVEC:
        return SH_TVEC;
    case K_PUT_TFINE:
        return SH_TFINE;
    case K_PUT_MANYSEG:
        return SH_MANYSEG;
    case K_ACC_SUM:
        return SH_AVEC;
    default:
        return contiguous(op->bytes);
    }
}

static struct shape origin_shape(const struct op *op)
{
    return op->kind == K_PUT_OVEC || op->kind == K_PUT_BOTH ? SH_OVEC : contiguous(op->bytes);
}

static uint32_t data_bytes(struct shape s) { return (uint32_t)(s.blocks * s.blocklen); }

/* The storm of one origin to one target: ops[0, first) mixed, ops[first,
 * n) small Puts, Accumulates and Gets, each part in random order. The same
 * on both sides (the target rebuilds it to check). */
struct plan {
    struct op *ops;
    int first, n;
    size_t result_bytes;
};

static uint64_t storm_seed(int epoch, int origin, int target, int idx) { return tu_seed(epoch, origin, target, idx); }

/* The kind of a mixed-part operation (the large ones are placed apart). */
static struct op pick_first(uint64_t *rng, bool request_forms)
{
    struct op op = {.kind = K_PUT};
    unsigned r = (unsigned)tu_range(rng, 0, 99);
    if (r < 36)
        op = op_of(K_PUT, (uint32_t)tu_range(rng, 1, 48));
    else if (r < 44)
        op.kind = K_PUT_TVEC;
    else if (r < 49)
        op.kind = K_PUT_TFINE;
    else if (r < 56)
        op.kind = K_PUT_OVEC;
    else if (r < 61)
        op.kind = K_PUT_BOTH;
    else if (r < 68)
        op.kind = K_ACC_SUM;
    else if (r < 75)
        op = op_of(K_ACC_REPLACE, (uint32_t)(sizeof(unsigned) * tu_range(rng, 1, 6)));
    else if (r < 86)
        op = op_of(K_GET, (uint32_t)tu_range(rng, 8, RESULT_SLOT));
    else if (r < 91)
        op.kind = K_GET_TVEC;
    else
        op = op_of(K_PUT, (uint32_t)tu_range(rng, 200, 2000));
    /* drawn whatever request_forms says: the target rebuilds the plan without */
    bool roll = tu_range(rng, 0, 5) == 0;
    op.request = roll && request_forms &&
                 (op.kind == K_PUT || op.kind == K_PUT_TVEC || op.kind == K_ACC_SUM || op.kind == K_ACC_REPLACE);
    return op;
}

/* The large ones, one every first / N_LARGE operations, in turn: Puts
 * at bmpi's bound of a passive epoch (8 KiB), above it, at and above the
 * bound of an active epoch whose end goes with them across nodes (32
 * KiB); Gets above the passive bound (16 KiB), at and above the active
 * one; Accumulates whose data bmpi leaves in the origin's buffer until
 * their message goes (from 1 KiB; 1028 bytes: not a multiple of 8); a
 * Put of a size drawn from 8194 bytes to DATA_MAX (bytes 0). */
static const struct {
    enum kind kind;
    uint32_t bytes;
} large_ops[] = {{K_PUT, 8192},         {K_PUT, 8193},          {K_PUT, 32768}, {K_PUT, 32769},
                 {K_GET, 16385},        {K_GET, 32768},         {K_GET, 32769}, {K_ACC_REPLACE, 1028},
                 {K_ACC_REPLACE, 16384}, {K_PUT, 0}};
#define N_LARGE (int)(sizeof large_ops / sizeof large_ops[0])

static struct op pick_large(uint64_t *rng, int nth)
{
    uint32_t bytes = large_ops[nth % N_LARGE].bytes;
    return op_of(large_ops[nth % N_LARGE].kind, bytes ? bytes : (uint32_t)tu_range(rng, 8194, DATA_MAX));
}

static struct op pick_small(uint64_t *rng)
{
    unsigned r = (unsigned)tu_range(rng, 0, 99);
    if (r < 78)
        return op_of(K_PUT, (uint32_t)tu_range(rng, 1, 32));
    if (r < 87)
        return op_of(K_GET, (uint32_t)tu_range(rng, 1, 64));
    if (r < 90)
        return op_of(K_GET_TVEC, 0);
    if (r < 94)
        return op_of(K_PUT_TVEC, 0);
    if (r < 97)
        return op_of(K_ACC_SUM, 0);
    return op_of(K_PUT_OVEC, 0);
}

static void shuffle(struct op *ops, int n, uint64_t *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)tu_range(rng, 0, (size_t)i);
        struct op t = ops[i];
        ops[i] = ops[j];
        ops[j] = t;
    }
}

/* Places op at *cursor in the region (accumulates at 8-byte alignment,
 * a gap of 0 to 3 bytes after it that nobody writes): false when the
 * region is full. */
static bool place(struct op *op, size_t *cursor, size_t region, uint64_t *rng)
{
    if (op->kind == K_PUT_OVEC)
        op->bytes = data_bytes(SH_OVEC);
    else if (op->kind != K_PUT && op->kind != K_ACC_REPLACE && op->kind != K_GET)
        op->bytes = data_bytes(target_shape(op));
    struct shape ts = target_shape(op);
    if (is_get(op)) {
        op->at = (uint32_t)tu_range(rng, 0, READ_ZONE - span(ts));
        return true;
    }
    size_t at = *cursor;
    if (op->kind == K_ACC_SUM || op->kind == K_ACC_REPLACE)
        at = (at + 7) & ~(size_t)7;
    if (at + span(ts) > region)
        return false;
    op->at = (uint32_t)at;
    *cursor = at + span(ts) + tu_range(rng, 0, 3);
    return true;
}

static void plan_make(struct plan *pl, const struct params *p, int epoch, int origin, int target, bool request_forms,
                      bool manyseg)
{
    pl->ops = malloc(sizeof *pl->ops * (size_t)(p->first + p->small));
    CHECK(pl->ops, "out of memory");
    uint64_t rng = storm_seed(epoch, origin, target, 0xffff);
    size_t cursor = 0;
    int n = 0, large_every = p->first / N_LARGE;
    for (int i = 0; i < p->first; i++) {
        struct op op = manyseg && i == p->first / 2          ? op_of(K_PUT_MANYSEG, 0)
                       : i % large_every == large_every / 2 ? pick_large(&rng, i / large_every)
                                                            : pick_first(&rng, request_forms);
        if (!place(&op, &cursor, p->region, &rng))
            break;
        pl->ops[n++] = op;
    }
    pl->first = n;
    for (int i = 0; i < p->small; i++) {
        struct op op = pick_small(&rng);
        if (!place(&op, &cursor, p->region, &rng))
            break;
        pl->ops[n++] = op;
    }
    pl->n = n;
    shuffle(pl->ops, pl->first, &rng);
    shuffle(pl->ops + pl->first, n - pl->first, &rng);
    pl->result_bytes = 0;
    for (int i = 0; i < n; i++) {
        struct op *op = &pl->ops[i];
        op->result = (uint32_t)pl->result_bytes;
        if (is_get(op) || (i < pl->first && read_back(op, i)))
            pl->result_bytes += op->bytes;
    }
}

/* Lays data[0, blocks * blocklen) out along s at dst; add: as unsigned
 * ints added to what is there (MPI_SUM). */
static void lay_out(unsigned char *dst, struct shape s, const unsigned char *data, bool add)
{
    for (int b = 0; b < s.blocks; b++, data += s.blocklen) {
        unsigned char *to = dst + (size_t)b * (size_t)s.stride;
        if (!add) {
            memcpy(to, data, (size_t)s.blocklen);
            continue;
        }
        for (int k = 0; k < s.blocklen; k += (int)sizeof(unsigned)) {
            unsigned x, y;
            memcpy(&x, to + k, sizeof x);
            memcpy(&y, data + k, sizeof y);
            x += y;
            memcpy(to + k, &x, sizeof x);
        }
    }
}

/* The bytes along s at src, packed. */
static void gather(unsigned char *dst, struct shape s, const unsigned char *src)
{
    for (int b = 0; b < s.blocks; b++, dst += s.blocklen)
        memcpy(dst, src + (size_t)b * (size_t)s.stride, (size_t)s.blocklen);
}

/* What one epoch's storm needs at an origin, per target. */
struct storm {
    const struct params *p;
    const struct types *ty;
    const struct window *w;
    int epoch;
    struct plan *plans;       /* per target */
    unsigned char **obuf;     /* per target: origin buffers, op at 2 * at */
    unsigned char **results;  /* per target: the Gets' and read-backs' bytes (struct op, result) */
    MPI_Request *reqs;
    int nreqs;
    unsigned char *data;      /* scratch: one operation's data */
};

static void op_data(unsigned char *d, const struct op *op, int epoch, int origin, int target, int i)
{
    tu_fill(d, op->bytes, storm_seed(epoch, origin, target, i));
}

static void read_zone_fill(unsigned char *zone, int target) { tu_fill(zone, READ_ZONE, tu_seed(7777, target, 0, 0)); }

static void issue_put(struct storm *st, int target, int i)
{
    const struct op *op = &st->plans[target].ops[i];
    const struct types *ty = st->ty;
    unsigned char *o = st->obuf[target] + 2 * (size_t)op->at;
    op_data(st->data, op, st->epoch, tu_rank, target, i);
    lay_out(o, origin_shape(op), st->data, false);
    MPI_Aint d = disp_of(st->w, target, READ_ZONE + (size_t)tu_rank * st->p->region + op->at);
    MPI_Win win = st->w->win;
    MPI_Request *req = op->request ? &st->reqs[st->nreqs++] : NULL;
    int n = (int)op->bytes;
    switch (op->kind) {
    case K_PUT:
        MPICHK(req ? MPI_Rput(o, n, MPI_BYTE, target, d, n, MPI_BYTE, win, req)
                   : MPI_Put(o, n, MPI_BYTE, target, d, n, MPI_BYTE, win));
        break;
    case K_PUT_TVEC:
        MPICHK(req ? MPI_Rput(o, n, MPI_BYTE, target, d, 1, ty->tvec, win, req)
                   : MPI_Put(o, n, MPI_BYTE, target, d, 1, ty->tvec, win));
        break;
    case K_PUT_TFINE:
        MPICHK(MPI_Put(o, n, MPI_BYTE, target, d, 1, ty->tfine, win));
        break;
    case K_PUT_OVEC:
        MPICHK(MPI_Put(o, 1, ty->ovec, target, d, n, MPI_BYTE, win));
        break;
    case K_PUT_BOTH:
        MPICHK(MPI_Put(o, 1, ty->ovec, target, d, 1, ty->tvec, win));
        break;
    case K_PUT_MANYSEG:
        MPICHK(MPI_Put(o, n, MPI_BYTE, target, d, 1, ty->manyseg, win));
        break;
    case K_ACC_SUM: {
        int cnt = n / (int)sizeof(unsigned);
        MPICHK(req ? MPI_Raccumulate(o, cnt, MPI_UNSIGNED, target, d, 1, ty->avec, MPI_SUM, win, req)
                   : MPI_Accumulate(o, cnt, MPI_UNSIGNED, target, d, 1, ty->avec, MPI_SUM, win));
        break;
    }
    default: { /* K_ACC_REPLACE */
        int cnt = n / (int)sizeof(unsigned);
        MPICHK(req ? MPI_Raccumulate(o, cnt, MPI_UNSIGNED, target, d, cnt, MPI_UNSIGNED, MPI_REPLACE, win, req)
                   : MPI_Accumulate(o, cnt, MPI_UNSIGNED, target, d, cnt, MPI_UNSIGNED, MPI_REPLACE, win));
        break;
    }
    }
}

static void issue_get(struct storm *st, int target, int i)
{
    const struct op *op = &st->plans[target].ops[i];
    unsigned char *r = st->results[target] + op->result;
    MPI_Aint d = disp_of(st->w, target, op->at);
    int n = (int)op->bytes;
    if (op->kind == K_GET)
        MPICHK(MPI_Get(r, n, MPI_BYTE, target, d, n, MPI_BYTE, st->w->win));
    else
        MPICHK(MPI_Get(r, n, MPI_BYTE, target, d, 1, st->ty->tvec, st->w->win));
}

static void issue_op(struct storm *st, int target, int i)
{
    if (is_get(&st->plans[target].ops[i]))
        issue_get(st, target, i);
    else
        issue_put(st, target, i);
}


static void issue_read_backs(struct storm *st, int target)
{
    const struct plan *pl = &st->plans[target];
    for (int i = 0; i < pl->first; i++) {
        const struct op *op = &pl->ops[i];
        if (!read_back(op, i))
            continue;
        MPI_Aint d = disp_of(st->w, target, READ_ZONE + (size_t)tu_rank * st->p->region + op->at);
        int n = (int)op->bytes;
        MPICHK(MPI_Get(st->results[target] + op->result, n, MPI_BYTE, target, d, n, MPI_BYTE,
                       st->w->win));
    }
}

/* The request forms done: their buffers may be reused at once, and are
 * (the data must have been taken). */
static void wait_requests(struct storm *st)
{
    MPICHK(MPI_Waitall(st->nreqs, st->reqs, MPI_STATUSES_IGNORE));
    st->nreqs = 0;
    for (int t = 0; t < tu_size; t++) {
        const struct plan *pl = &st->plans[t];
        for (int i = 0; i < pl->n; i++)
            if (pl->ops[i].request)
                memset(st->obuf[t] + 2 * (size_t)pl->ops[i].at, 0xdb, span(origin_shape(&pl->ops[i])));
    }
}

/* Issues the first part (or the rest) of every target's storm, one
 * operation per target in turn. */
static void issue_range(struct storm *st, bool first_part)
{
    int most = 0;
    for (int t = 0; t < tu_size; t++) {
        const struct plan *pl = &st->plans[t];
        int n = first_part ? pl->first : pl->n - pl->first;
        most = n > most ? n : most;
    }
    for (int i = 0; i < most; i++)
        for (int k = 0; k < tu_size; k++) {
            int t = target_at(k);
            const struct plan *pl = &st->plans[t];
            int at = first_part ? i : pl->first + i;
            if (at < (first_part ? pl->first : pl->n))
                issue_op(st, t, at);
        }
}

static void storm_issue_one_target(struct storm *st, int t)
{
    const struct plan *pl = &st->plans[t];
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, st->w->win));
    for (int i = 0; i < pl->first; i++)
        issue_op(st, t, i);
    wait_requests(st);
    MPICHK(MPI_Win_flush(t, st->w->win));
    issue_read_backs(st, t);
    for (int i = pl->first; i < pl->n; i++)
        issue_op(st, t, i);
    wait_requests(st);
    MPICHK(MPI_Win_unlock(t, st->w->win));
}

static void storm_issue(struct storm *st, enum sync s)
{
    if (s == SY_LOCK) {
        for (int k = 0; k < tu_size; k++)
            storm_issue_one_target(st, target_at(k));
        return;
    }
    issue_range(st, true);
    if (s == SY_LOCK_ALL) {
        wait_requests(st);
        MPICHK(MPI_Win_flush_all(st->w->win));
        for (int k = 0; k < tu_size; k++)
            issue_read_backs(st, target_at(k));
    }
    issue_range(st, false);
    if (s == SY_LOCK_ALL)
        wait_requests(st);
}

/* The origin's checks: every Get of the read zone, the read-backs. */
static void storm_check_origin(struct storm *st, enum sync s, const char *what)
{
    static unsigned char zone[READ_ZONE], want[DATA_MAX];
    for (int t = 0; t < tu_size; t++) {
        const struct plan *pl = &st->plans[t];
        read_zone_fill(zone, t);
        for (int i = 0; i < pl->n; i++) {
            const struct op *op = &pl->ops[i];
            const unsigned char *got = st->results[t] + op->result;
            if (is_get(op))
                gather(want, target_shape(op), zone + op->at);
            else if (passive(s) && i < pl->first && read_back(op, i))
                op_data(want, op, st->epoch, tu_rank, t, i);
            else
                continue;
            CHECK(memcmp(got, want, op->bytes) == 0,
                  "%s: %s %u bytes from target %d (operation %d, kind %d at %u) differ from the target's",
                  what, is_get(op) ? "Get" : "read-back after the flush", op->bytes, t, i, op->kind, op->at);
        }
    }
}

/* What origin's region at this rank must hold after the epoch. */
static void storm_expect(unsigned char *want, const struct plan *pl, const struct params *p, int epoch, int origin,
                         unsigned char *data)
{
    tu_fill(want, p->region, storm_seed(epoch, origin, tu_rank, 0xfffe));
    for (int i = 0; i < pl->n; i++) {
        const struct op *op = &pl->ops[i];
        if (is_get(op))
            continue;
        op_data(data, op, epoch, origin, tu_rank, i);
        lay_out(want + op->at, target_shape(op), data, op->kind == K_ACC_SUM);
    }
}

/* The operation whose target span holds byte at, for the message. */
static int op_at(const struct plan *pl, size_t at)
{
    for (int i = 0; i < pl->n; i++) {
        const struct op *op = &pl->ops[i];
        if (!is_get(op) && at >= op->at && at < op->at + span(target_shape(op)))
            return i;
    }
    return -1;
}

static void storm_check_target(const struct window *w, const struct params *p, int epoch, const char *what)
{
    unsigned char *want = malloc(p->region), *data = malloc(DATA_MAX);
    CHECK(want && data, "out of memory");
    for (int o = 0; o < tu_size; o++) {
        struct plan pl;
        plan_make(&pl, p, epoch, o, tu_rank, false, w->flavor == FL_DYNAMIC);
        storm_expect(want, &pl, p, epoch, o, data);
        const unsigned char *got = w->mem + READ_ZONE + (size_t)o * p->region;
        for (size_t b = 0; b < p->region; b++) {
            if (got[b] == want[b])
                continue;
            int i = op_at(&pl, b);
            CHECK(0, "%s: byte %zu of origin %d's region is 0x%02x, not 0x%02x (%s %d of %d, kind %d at %u)", what,
                  b, o, got[b], want[b], i < 0 ? "between operations, near" : "operation", i < 0 ? 0 : i, pl.n,
                  i < 0 ? -1 : pl.ops[i].kind, i < 0 ? 0 : pl.ops[i].at);
        }
        free(pl.ops);
    }
    free(want);
    free(data);
}

static void storm_reset(const struct window *w, const struct params *p, int epoch)
{
    read_zone_fill(w->mem, tu_rank);
    for (int o = 0; o < tu_size; o++)
        tu_fill(w->mem + READ_ZONE + (size_t)o * p->region, p->region, storm_seed(epoch, o, tu_rank, 0xfffe));
}

static void run_storm(const struct window *w, const struct params *p, const struct types *ty, enum sync s, int epoch,
                      const char *what)
{
    struct storm st = {.p = p, .ty = ty, .w = w, .epoch = epoch};
    st.plans = calloc((size_t)tu_size, sizeof *st.plans);
    st.obuf = calloc((size_t)tu_size, sizeof *st.obuf);
    st.results = calloc((size_t)tu_size, sizeof *st.results);
    st.reqs = malloc(sizeof *st.reqs * (size_t)tu_size * (size_t)(p->first + p->small));
    st.data = malloc(DATA_MAX);
    CHECK(st.plans && st.obuf && st.results && st.reqs && st.data, "out of memory");
    for (int t = 0; t < tu_size; t++) {
        plan_make(&st.plans[t], p, epoch, tu_rank, t, passive(s), w->flavor == FL_DYNAMIC);
        st.obuf[t] = malloc(2 * p->region);
        size_t results = st.plans[t].result_bytes;
        st.results[t] = malloc(results ? results : 1);
        CHECK(st.obuf[t] && st.results[t], "out of memory");
        memset(st.results[t], 0xee, results);
    }
    storm_reset(w, p, epoch);
    reset_done();
    epoch_open(w, s);
    storm_issue(&st, s);
    epoch_close(w, s);
    storm_check_origin(&st, s, what);
    if (passive(s))
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, w->win));
    storm_check_target(w, p, epoch, what);
    if (passive(s))
        MPICHK(MPI_Win_unlock(tu_rank, w->win));
    for (int t = 0; t < tu_size; t++) {
        free(st.plans[t].ops);
        free(st.obuf[t]);
        free(st.results[t]);
    }
    free(st.plans);
    free(st.obuf);
    free(st.results);
    free(st.reqs);
    free(st.data);
}

/* ---- 2. accumulate ordering ------------------------------------------------------ */

/* One origin's rounds on one target: element 0 (and 2) of its slot there
 * as they must be, an origin buffer per operation (none is reused before
 * the epoch ends), the values fetched and those they must be. */
struct order {
    MPI_Aint at;
    long e0, e2;
    long *vals;
    int nvals;
    long *got, *want;
    int nfetched;
};

#define ORDER_VALS_PER_ROUND 20 /* 9 calls, 2 longs each */
#define ORDER_FETCHED_PER_ROUND 6

static long *vals(struct order *o, long a, long b)
{
    long *v = &o->vals[o->nvals];
    v[0] = a;
    v[1] = b;
    o->nvals += 2;
    return v;
}

static long *fetched(struct order *o, long want0, long want1, int n)
{
    long *g = &o->got[o->nfetched];
    o->want[o->nfetched] = want0;
    if (n > 1)
        o->want[o->nfetched + 1] = want1;
    o->nfetched += n;
    return g;
}

static void order_round(struct order *o, const struct types *ty, MPI_Win win, int target, long j, bool request_forms)
{
    long x = 1000L * j + 17L * target + 3;
    MPICHK(MPI_Accumulate(vals(o, x, 0), 1, MPI_LONG, target, o->at, 1, MPI_LONG, MPI_REPLACE, win));
    o->e0 = x;
    for (long k = 1; k <= 3; k++) {
        MPICHK(MPI_Accumulate(vals(o, j + k, 0), 1, MPI_LONG, target, o->at, 1, MPI_LONG, MPI_SUM, win));
        o->e0 += j + k;
    }
    MPICHK(MPI_Fetch_and_op(vals(o, 1, 0), fetched(o, o->e0, 0, 1), MPI_LONG, target, o->at, MPI_SUM, win));
    o->e0 += 1;
    MPICHK(MPI_Accumulate(vals(o, 5, 7), 2, MPI_LONG, target, o->at, 1, ty->lstride, MPI_SUM, win));
    o->e0 += 5;
    o->e2 += 7;
    MPICHK(MPI_Get_accumulate(NULL, 0, MPI_LONG, fetched(o, o->e0, o->e2, 2), 2, MPI_LONG, target, o->at, 1,
                              ty->lstride, MPI_NO_OP, win));
    MPICHK(MPI_Accumulate(vals(o, x + 11, 0), 1, MPI_LONG, target, o->at, 1, MPI_LONG, MPI_REPLACE, win));
    o->e0 = x + 11;
    MPICHK(MPI_Get_accumulate(vals(o, 2, 0), 1, MPI_LONG, fetched(o, o->e0, 0, 1), 1, MPI_LONG, target, o->at, 1,
                              MPI_LONG, MPI_SUM, win));
    o->e0 += 2;
    if (request_forms) {
        MPI_Request req;
        long *v = vals(o, 4, 0);
        MPICHK(MPI_Raccumulate(v, 1, MPI_LONG, target, o->at, 1, MPI_LONG, MPI_SUM, win, &req));
        MPICHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        v[0] = 1000000; /* reusable once the request is done */
        o->e0 += 4;
    }
    MPICHK(MPI_Fetch_and_op(NULL, fetched(o, o->e0, 0, 1), MPI_LONG, target, o->at, MPI_NO_OP, win));
}

/* The last two: what the target checks. */
static long order_final(int origin, int target, int elem) { return 7000000L + 1000L * origin + 10L * target + elem; }

static void order_last(struct order *o, const struct types *ty, MPI_Win win, int target)
{
    MPICHK(MPI_Accumulate(vals(o, order_final(tu_rank, target, 0) - 1, order_final(tu_rank, target, 2) - 2), 2,
                          MPI_LONG, target, o->at, 1, ty->lstride, MPI_REPLACE, win));
    MPICHK(MPI_Accumulate(vals(o, 1, 2), 2, MPI_LONG, target, o->at, 1, ty->lstride, MPI_SUM, win));
}

static void order_check_origin(const struct order *ord, const char *what)
{
    for (int t = 0; t < tu_size; t++) {
        const struct order *o = &ord[t];
        for (int i = 0; i < o->nfetched; i++)
            CHECK(o->got[i] == o->want[i],
                  "%s: value %d fetched from target %d is %ld, not %ld: an earlier accumulate of this origin "
                  "was not applied first",
                  what, i, t, o->got[i], o->want[i]);
    }
}

static void order_check_target(const struct window *w, const struct params *p, const char *what)
{
    for (int o = 0; o < tu_size; o++) {
        long slot[SLOT_LONGS];
        memcpy(slot, w->mem + p->slots_at + (size_t)o * sizeof slot, sizeof slot);
        CHECK(slot[0] == order_final(o, tu_rank, 0) && slot[2] == order_final(o, tu_rank, 2) && slot[1] == 0 &&
                  slot[3] == 0,
              "%s: origin %d's slot holds {%ld, %ld, %ld, %ld}, not {%ld, 0, %ld, 0}", what, o, slot[0], slot[1],
              slot[2], slot[3], order_final(o, tu_rank, 0), order_final(o, tu_rank, 2));
    }
}

static void order_issue(struct order *ord, const struct window *w, const struct params *p, const struct types *ty,
                        enum sync s)
{
    bool request_forms = passive(s);
    if (s == SY_LOCK) {
        for (int k = 0; k < tu_size; k++) {
            int t = target_at(k);
            MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w->win));
            for (long j = 1; j <= p->rounds; j++)
                order_round(&ord[t], ty, w->win, t, j, request_forms);
            order_last(&ord[t], ty, w->win, t);
            MPICHK(MPI_Win_unlock(t, w->win));
        }
        return;
    }
    for (long j = 1; j <= p->rounds; j++)
        for (int k = 0; k < tu_size; k++)
            order_round(&ord[target_at(k)], ty, w->win, target_at(k), j, request_forms);
    for (int k = 0; k < tu_size; k++)
        order_last(&ord[target_at(k)], ty, w->win, target_at(k));
}

static void run_order(const struct window *w, const struct params *p, const struct types *ty, enum sync s,
                      const char *what)
{
    struct order *ord = calloc((size_t)tu_size, sizeof *ord);
    CHECK(ord, "out of memory");
    for (int t = 0; t < tu_size; t++) {
        struct order *o = &ord[t];
        o->at = disp_of(w, t, p->slots_at + (size_t)tu_rank * SLOT_LONGS * sizeof(long));
        o->vals = malloc(sizeof(long) * ((size_t)p->rounds * ORDER_VALS_PER_ROUND + 8));
        o->got = malloc(sizeof(long) * (size_t)p->rounds * ORDER_FETCHED_PER_ROUND);
        o->want = malloc(sizeof(long) * (size_t)p->rounds * ORDER_FETCHED_PER_ROUND);
        CHECK(o->vals && o->got && o->want, "out of memory");
        for (int i = 0; i < p->rounds * ORDER_FETCHED_PER_ROUND; i++)
            o->got[i] = LONG_MIN;
    }
    memset(w->mem + p->slots_at, 0, (size_t)tu_size * SLOT_LONGS * sizeof(long));
    reset_done();
    epoch_open(w, s);
    order_issue(ord, w, p, ty, s);
    epoch_close(w, s);
    order_check_origin(ord, what);
    if (passive(s))
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, w->win));
    order_check_target(w, p, what);
    if (passive(s))
        MPICHK(MPI_Win_unlock(tu_rank, w->win));
    for (int t = 0; t < tu_size; t++) {
        free(ord[t].vals);
        free(ord[t].got);
        free(ord[t].want);
    }
    free(ord);
}

/* ---- 3. atomicity ------------------------------------------------------------------ */

#define ADDS_PER_ITER 3 /* two Accumulates, one Fetch_and_op */

static void counter_iter(MPI_Win win, int target, MPI_Aint at, long *fetch)
{
    static const long one = 1;
    MPICHK(MPI_Accumulate(&one, 1, MPI_LONG, target, at, 1, MPI_LONG, MPI_SUM, win));
    MPICHK(MPI_Accumulate(&one, 1, MPI_LONG, target, at, 1, MPI_LONG, MPI_SUM, win));
    MPICHK(MPI_Fetch_and_op(&one, fetch, MPI_LONG, target, at, MPI_SUM, win));
}

static void counter_issue(const struct window *w, const struct params *p, enum sync s, long *got)
{
    if (s == SY_LOCK) {
        for (int k = 0; k < tu_size; k++) {
            int t = target_at(k);
            MPI_Aint at = disp_of(w, t, p->counter_at);
            MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w->win));
            for (int i = 0; i < p->adds; i++)
                counter_iter(w->win, t, at, &got[(size_t)t * p->adds + i]);
            MPICHK(MPI_Win_unlock(t, w->win));
        }
        return;
    }
    for (int i = 0; i < p->adds; i++)
        for (int k = 0; k < tu_size; k++) {
            int t = target_at(k);
            counter_iter(w->win, t, disp_of(w, t, p->counter_at), &got[(size_t)t * p->adds + i]);
        }
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* fetched[o * adds + i]: what origin o's i-th Fetch_and_op found here. */
static void counter_check(const struct window *w, const struct params *p, long *fetched, const char *what)
{
    long total = (long)tu_size * p->adds * ADDS_PER_ITER, value;
    memcpy(&value, w->mem + p->counter_at, sizeof value);
    CHECK(value == total, "%s: the counter is %ld, not %ld", what, value, total);
    for (int o = 0; o < tu_size; o++)
        for (int i = 1; i < p->adds; i++) {
            long before = fetched[(size_t)o * p->adds + i - 1], now = fetched[(size_t)o * p->adds + i];
            CHECK(now >= before + ADDS_PER_ITER,
                  "%s: origin %d's Fetch_and_op %d found %ld, less than %ld + %d (its own earlier adds)", what, o, i,
                  now, before, ADDS_PER_ITER);
        }
    size_t n = (size_t)tu_size * p->adds;
    qsort(fetched, n, sizeof *fetched, cmp_long);
    for (size_t i = 0; i < n; i++)
        CHECK(fetched[i] >= 0 && fetched[i] < total && (i == 0 || fetched[i] != fetched[i - 1]),
              "%s: Fetch_and_op values not distinct or out of [0, %ld): %ld (sorted #%zu)", what, total, fetched[i],
              i);
}

static void run_counter(const struct window *w, const struct params *p, enum sync s, const char *what)
{
    size_t n = (size_t)tu_size * p->adds;
    long *got = malloc(n * sizeof *got), *fetched = malloc(n * sizeof *fetched);
    CHECK(got && fetched, "out of memory");
    memset(w->mem + p->counter_at, 0, sizeof(long));
    reset_done();
    epoch_open(w, s);
    counter_issue(w, p, s, got);
    epoch_close(w, s);
    MPICHK(MPI_Alltoall(got, p->adds, MPI_LONG, fetched, p->adds, MPI_LONG, MPI_COMM_WORLD));
    if (passive(s))
        MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, w->win));
    counter_check(w, p, fetched, what);
    if (passive(s))
        MPICHK(MPI_Win_unlock(tu_rank, w->win));
    free(got);
    free(fetched);
}

/* ---- an error: memory the target never attached ---------------------------------- */

static bool survey(void)
{
    const char *e = getenv("RMA_ERRORS_SURVEY");
    return e && *e && strcmp(e, "0") != 0;
}

static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPICHK(MPI_Error_class(rc, &cls));
    return cls;
}

enum stray { STRAY_PUT, STRAY_ACC, STRAY_GET, STRAY_COUNT };
static const char *const stray_name[STRAY_COUNT] = {"Put", "Accumulate", "Get"};

/* The small operation of kind k to target's stray memory. */
static int stray_op(const struct window *w, int target, enum stray k, long *bad)
{
    MPI_Aint at = w->stray[target];
    switch (k) {
    case STRAY_ACC:
        return MPI_Accumulate(bad, 1, MPI_LONG, target, at, 1, MPI_LONG, MPI_SUM, w->win);
    case STRAY_GET:
        return MPI_Get(bad, 1, MPI_LONG, target, at, 1, MPI_LONG, w->win);
    default:
        return MPI_Put(bad, 1, MPI_LONG, target, at, 1, MPI_LONG, w->win);
    }
}

/* One lock epoch on target: good Puts around a small Put, Accumulate or
 * Get (kind k) to its stray memory. Returns the first error class of that
 * call, the next Put, the flush and the unlock (MPI_SUCCESS when none
 * failed). */
static int stray_epoch(const struct window *w, const struct params *p, int target, enum stray k, long *good)
{
    MPI_Aint good_at = disp_of(w, target, READ_ZONE + (size_t)tu_rank * p->region);
    long bad = 42;
    int rc[4];
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w->win));
    MPICHK(MPI_Put(&good[0], 1, MPI_LONG, target, good_at, 1, MPI_LONG, w->win));
    rc[0] = stray_op(w, target, k, &bad);
    rc[1] = MPI_Put(&good[1], 1, MPI_LONG, target, MPI_Aint_add(good_at, sizeof(long)), 1, MPI_LONG, w->win);
    rc[2] = MPI_Win_flush(target, w->win);
    rc[3] = MPI_Win_unlock(target, w->win);
    const char *what = stray_name[k];
    if (survey()) {
        if (tu_rank == 0)
            printf("survey: %s to unattached memory of a dynamic window: classes %d (call) %d (next Put) "
                   "%d (flush) %d (unlock); MPI_ERR_RMA_RANGE is %d\n",
                   what, error_class(rc[0]), error_class(rc[1]), error_class(rc[2]), error_class(rc[3]),
                   MPI_ERR_RMA_RANGE);
        return MPI_ERR_RMA_RANGE;
    }
    CHECK(rc[1] == MPI_SUCCESS, "a good Put after the stray %s failed: %s", what, tu_errstr(rc[1]));
    int first = MPI_SUCCESS;
    for (int i = 0; i < 4; i++) {
        int cls = error_class(rc[i]);
        CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_RMA_RANGE, "%s to unattached memory: call %d answered %s", what,
              i, tu_errstr(rc[i]));
        if (first == MPI_SUCCESS)
            first = cls;
    }
    return first;
}

static void check_stray(const struct window *w, const struct params *p, const long *good, const char *what)
{
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (survey())
        return;
    int origin = (tu_rank + tu_size - 1) % tu_size;
    long landed[2];
    memcpy(landed, w->mem + READ_ZONE + (size_t)origin * p->region, sizeof landed);
    /* the next epoch of the origin writes there again */
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(landed[0] == good[0] && landed[1] == good[1],
          "%s: the good Puts around it from origin %d left {%ld, %ld}, not {%ld, %ld}", what, origin, landed[0],
          landed[1], good[0], good[1]);
    CHECK(tu_verify_byte(w->stray_mem, STRAY_BYTES, STRAY_BYTE) < 0, "%s: unattached memory was written", what);
}

static void run_range_error(const struct window *w, const struct params *p)
{
    int target = target_at(0);
    for (int k = 0; k < STRAY_COUNT; k++) {
        long good[2] = {1000L + k, 2000L + k};
        int cls = stray_epoch(w, p, target, (enum stray)k, good);
        CHECK(cls == MPI_ERR_RMA_RANGE, "%s to memory target %d never attached: no call answered MPI_ERR_RMA_RANGE",
              stray_name[k], target);
        char what[64];
        snprintf(what, sizeof what, "%s to unattached memory", stray_name[k]);
        check_stray(w, p, good, what);
    }
    /* the window still works */
    long after[2] = {3000, 4000};
    MPI_Aint at = disp_of(w, target, READ_ZONE + (size_t)tu_rank * p->region);
    MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w->win));
    MPICHK(MPI_Put(after, 2, MPI_LONG, target, at, 2, MPI_LONG, w->win));
    MPICHK(MPI_Win_unlock(target, w->win));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    long landed[2];
    memcpy(landed, w->mem + READ_ZONE + (size_t)((tu_rank + tu_size - 1) % tu_size) * p->region, sizeof landed);
    CHECK(landed[0] == after[0] && landed[1] == after[1], "after the errors, a Put left {%ld, %ld}, not {3000, 4000}",
          landed[0], landed[1]);
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "rma_batch");
    struct params p = params_for(tu_size);
    struct types ty;
    types_make(&ty);
    int epoch = 0;
    for (int fl = 0; fl < FL_COUNT; fl++) {
        struct window w;
        window_open(&w, (enum flavor)fl, &p);
        for (int s = 0; s < SY_COUNT; s++) {
            char what[96];
            snprintf(what, sizeof what, "%s, %s", flavor_name[fl], sync_name[s]);
            run_storm(&w, &p, &ty, (enum sync)s, ++epoch, what);
            run_order(&w, &p, &ty, (enum sync)s, what);
            run_counter(&w, &p, (enum sync)s, what);
        }
        if (fl == FL_DYNAMIC)
            run_range_error(&w, &p);
        window_close(&w);
    }
    types_free(&ty);
    tu_finish();
    return 0;
}
