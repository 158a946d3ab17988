/*
 * Every RMA operation x every synchronization mode x datatype layouts x
 * window flavor, with exact values checked at the origin and the target.
 *
 * For each flavor (Win_create with disp_unit 4 on a small heap block and
 * with disp_unit 2 inside a 256 KiB one, Win_allocate with
 * disp_unit 1, Win_allocate_shared with disp_unit 8 when all ranks share a
 * node, Win_create_dynamic with attached memory and MPI_Get_address
 * displacements) and each synchronization mode (fence, fence with
 * assertions, PSCW, lock shared, lock exclusive, lock_all with flush /
 * flush_local / flush_all / flush_local_all), every rank opens one epoch
 * towards target (rank + shift) % size and issues, each into its own
 * 128-byte slot of the target's window:
 *   Put, Get, Accumulate (SUM, REPLACE, MAX, MIN), Get_accumulate (SUM,
 *   NO_OP, REPLACE), Rput, Rget, Raccumulate, Rget_accumulate
 * for MPI_INT and MPI_DOUBLE elements and seven (origin, target) layout
 * pairs built from contiguous, vector, indexed, struct and resized types;
 * plus Fetch_and_op (SUM, NO_OP) and Compare_and_swap (matching and not)
 * on single elements. The request-based operations are only allowed in
 * passive-target epochs: in fence and PSCW epochs their slots are left
 * alone, and checked to be untouched.
 *
 * Expected values come from the element offsets of each layout, written
 * out by hand (layout_offsets), not from the datatypes: a datatype engine
 * that walks a type wrongly cannot agree with itself. Gaps between the
 * elements a type covers are checked to be untouched, at both ends.
 *
 *   rma_matrix [create|create_big|allocate|shared|dynamic]   one flavor (default all)
 */
#include "rma_util.h"

#define SLOT_BYTES 128 /* 16 elements of up to 8 bytes */
#define SLOT_ELEMS 16
#define NELEM 8        /* elements each layout covers */
#define SENTINEL (-7)
#define MAX_SLOTS 256

enum layout { L_CONTIG, L_VECTOR, L_INDEXED, L_STRUCT, L_RESIZED, L_SINGLE };
static const char *const layout_name[] = {"contig", "vector", "indexed", "struct", "resized", "single"};

enum kind { K_PUT, K_GET, K_ACC, K_GACC, K_FOP, K_CAS, K_RPUT, K_RGET, K_RACC, K_RGACC };
static const char *const kind_name[] = {"Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op",
                                        "Compare_and_swap", "Rput", "Rget", "Raccumulate",
                                        "Rget_accumulate"};

enum sync {
    S_FENCE, S_FENCE_ASSERT, S_PSCW, S_LOCK_SHARED, S_LOCK_EXCL, S_LOCKALL_FLUSH, S_LOCKALL_FLUSH_LOCAL,
    S_LOCKALL_FLUSH_ALL, S_LOCKALL_FLUSH_LOCAL_ALL, S_COUNT
};
static const char *const sync_name[] = {"fence", "fence+assert", "pscw", "lock-shared", "lock-exclusive",
                                        "lock_all+flush", "lock_all+flush_local", "lock_all+flush_all",
                                        "lock_all+flush_local_all"};

enum flavor { F_CREATE, F_CREATE_BIG, F_ALLOCATE, F_SHARED, F_DYNAMIC, F_COUNT };
static const char *const flavor_name[] = {"Win_create", "Win_create (in a 256 KiB block)", "Win_allocate",
                                          "Win_allocate_shared", "Win_create_dynamic"};

/* F_CREATE_BIG: the window starts BIG_OFFSET bytes into a block of
 * BIG_BLOCK bytes. Small and large heap blocks may take different paths
 * (bmpi maps blocks of 64 KiB and more from the target's shared heap,
 * docs/rma.md); both must work. */
#define BIG_BLOCK (256 * 1024)
#define BIG_OFFSET 4096

/* One operation of the epoch, into its own slot. */
struct slot {
    enum kind kind;
    MPI_Op op;
    const char *op_name;
    MPI_Datatype elem; /* MPI_INT or MPI_DOUBLE */
    enum layout olay, tlay;
    int cas_match;     /* Compare_and_swap: compare with the current value */
};

struct matrix {
    struct slot *slots;
    int nslots;
    /* origin side, per slot: data (and compare) buffer and result buffer */
    unsigned char *obuf, *rbuf, *cbuf;
    MPI_Request *reqs;
    int wrong; /* wrong values seen in this epoch */
};

/* Offsets (in elements) of the NELEM elements a layout covers; written out
 * by hand to match build_type. */
static int layout_offsets(enum layout l, int off[NELEM])
{
    static const int tab[][NELEM] = {
        [L_CONTIG] = {0, 1, 2, 3, 4, 5, 6, 7},     [L_VECTOR] = {0, 1, 3, 4, 6, 7, 9, 10},
        [L_INDEXED] = {0, 2, 3, 4, 7, 8, 11, 12},  [L_STRUCT] = {1, 2, 3, 6, 7, 8, 9, 10},
        [L_RESIZED] = {0, 2, 4, 6, 8, 10, 12, 14}, [L_SINGLE] = {0},
    };
    memcpy(off, tab[l], sizeof tab[l]);
    return l == L_SINGLE ? 1 : NELEM;
}

/* The datatype and count for layout l of elem; *owned says to free it. */
static void build_type(enum layout l, MPI_Datatype elem, MPI_Datatype *type, int *count, int *owned)
{
    int es;
    MPICHK(MPI_Type_size(elem, &es));
    *owned = 1;
    *count = 1;
    switch (l) {
    case L_CONTIG:
        *type = elem;
        *count = NELEM;
        *owned = 0;
        return;
    case L_SINGLE:
        *type = elem;
        *owned = 0;
        return;
    case L_VECTOR:
        MPICHK(MPI_Type_vector(4, 2, 3, elem, type));
        break;
    case L_INDEXED: {
        int bl[4] = {1, 3, 2, 2}, dp[4] = {0, 2, 7, 11};
        MPICHK(MPI_Type_indexed(4, bl, dp, elem, type));
        break;
    }
    case L_STRUCT: {
        int bl[2] = {3, 5};
        MPI_Aint dp[2] = {es, 6 * es};
        MPI_Datatype ty[2] = {elem, elem};
        MPICHK(MPI_Type_create_struct(2, bl, dp, ty, type));
        break;
    }
    case L_RESIZED:
        MPICHK(MPI_Type_create_resized(elem, 0, 2 * es, type));
        *count = NELEM;
        break;
    }
    MPICHK(MPI_Type_commit(type));
}

/* ------------------------------------------------------------ values */

/* What rank r's window holds at element i of slot s before the epoch. */
static long target_init(int r, int s, int i)
{
    return (long)r * 100000 + s * 32 + i + 1;
}

/* What origin o sends from element i of slot s: above every target value
 * for even i, below for odd i, so MAX and MIN pick both sides. */
static long origin_value(int o, int s, int i)
{
    long v = 5000000 + (long)o * 100000 + s * 32 + i + 1;
    return (i & 1) ? -v : v;
}

static long apply(MPI_Op op, long t, long o)
{
    if (op == MPI_SUM)
        return t + o;
    if (op == MPI_REPLACE)
        return o;
    if (op == MPI_MAX)
        return t > o ? t : o;
    if (op == MPI_MIN)
        return t < o ? t : o;
    return t; /* MPI_NO_OP */
}

static void put_elem(void *buf, MPI_Datatype elem, int i, long v)
{
    if (elem == MPI_INT)
        ((int *)buf)[i] = (int)v;
    else
        ((double *)buf)[i] = (double)v;
}

static long get_elem(const void *buf, MPI_Datatype elem, int i)
{
    if (elem == MPI_INT)
        return ((const int *)buf)[i];
    return (long)((const double *)buf)[i];
}

/* ------------------------------------------------------------- slots */

static int active_sync(enum sync s)
{
    return s == S_FENCE || s == S_FENCE_ASSERT || s == S_PSCW;
}

static int request_kind(enum kind k)
{
    return k == K_RPUT || k == K_RGET || k == K_RACC || k == K_RGACC;
}

static int fetching_kind(enum kind k)
{
    return k == K_GET || k == K_GACC || k == K_FOP || k == K_CAS || k == K_RGET || k == K_RGACC;
}

/* Does this slot's operation run in an epoch of sync mode m? */
static int slot_runs(const struct slot *sl, enum sync m)
{
    return !(request_kind(sl->kind) && active_sync(m));
}

static void add_slot(struct matrix *mx, enum kind k, MPI_Op op, const char *op_name, MPI_Datatype elem,
                     enum layout ol, enum layout tl, int cas_match)
{
    CHECK(mx->nslots < MAX_SLOTS, "more than %d slots", MAX_SLOTS);
    struct slot *sl = &mx->slots[mx->nslots++];
    sl->kind = k;
    sl->op = op;
    sl->op_name = op_name;
    sl->elem = elem;
    sl->olay = ol;
    sl->tlay = tl;
    sl->cas_match = cas_match;
}

static void build_slots(struct matrix *mx)
{
    static const enum layout pairs[][2] = {
        {L_CONTIG, L_CONTIG}, {L_CONTIG, L_VECTOR},  {L_INDEXED, L_CONTIG}, {L_STRUCT, L_STRUCT},
        {L_CONTIG, L_RESIZED}, {L_VECTOR, L_INDEXED}, {L_RESIZED, L_STRUCT},
    };
    const MPI_Datatype elems[2] = {MPI_INT, MPI_DOUBLE};
    mx->slots = calloc(MAX_SLOTS, sizeof *mx->slots);
    CHECK(mx->slots != NULL, "out of memory");
    mx->nslots = 0;
    for (int e = 0; e < 2; e++) {
        MPI_Datatype el = elems[e];
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
            enum layout ol = pairs[p][0], tl = pairs[p][1];
            add_slot(mx, K_PUT, MPI_REPLACE, "-", el, ol, tl, 0);
            add_slot(mx, K_GET, MPI_NO_OP, "-", el, ol, tl, 0);
            add_slot(mx, K_ACC, MPI_SUM, "MPI_SUM", el, ol, tl, 0);
            add_slot(mx, K_ACC, MPI_REPLACE, "MPI_REPLACE", el, ol, tl, 0);
            add_slot(mx, K_ACC, MPI_MAX, "MPI_MAX", el, ol, tl, 0);
            add_slot(mx, K_ACC, MPI_MIN, "MPI_MIN", el, ol, tl, 0);
            add_slot(mx, K_GACC, MPI_SUM, "MPI_SUM", el, ol, tl, 0);
            add_slot(mx, K_GACC, MPI_NO_OP, "MPI_NO_OP", el, ol, tl, 0);
            add_slot(mx, K_GACC, MPI_REPLACE, "MPI_REPLACE", el, ol, tl, 0);
            add_slot(mx, K_RPUT, MPI_REPLACE, "-", el, ol, tl, 0);
            add_slot(mx, K_RGET, MPI_NO_OP, "-", el, ol, tl, 0);
            add_slot(mx, K_RACC, MPI_MAX, "MPI_MAX", el, ol, tl, 0);
            add_slot(mx, K_RGACC, MPI_SUM, "MPI_SUM", el, ol, tl, 0);
        }
        add_slot(mx, K_FOP, MPI_SUM, "MPI_SUM", el, L_SINGLE, L_SINGLE, 0);
        add_slot(mx, K_FOP, MPI_NO_OP, "MPI_NO_OP", el, L_SINGLE, L_SINGLE, 0);
        add_slot(mx, K_FOP, MPI_REPLACE, "MPI_REPLACE", el, L_SINGLE, L_SINGLE, 0);
    }
    /* Compare_and_swap takes integer (and logical, byte) types only. */
    add_slot(mx, K_CAS, MPI_NO_OP, "-", MPI_INT, L_SINGLE, L_SINGLE, 1);
    add_slot(mx, K_CAS, MPI_NO_OP, "-", MPI_INT, L_SINGLE, L_SINGLE, 0);
    add_slot(mx, K_CAS, MPI_NO_OP, "-", MPI_LONG, L_SINGLE, L_SINGLE, 1);
}

/* ----------------------------------------------------------- windows */

struct window {
    MPI_Win win;
    enum flavor flavor;
    unsigned char *mem;   /* my window memory: nslots slots */
    void *attached;       /* F_DYNAMIC: what I attached; F_CREATE_BIG: the block */
    int disp_unit;
    MPI_Aint *dyn_base;   /* F_DYNAMIC: every rank's attached address */
};

static void window_open(struct window *w, enum flavor f, size_t bytes)
{
    static const int units[F_COUNT] = {[F_CREATE] = 4, [F_CREATE_BIG] = 2, [F_ALLOCATE] = 1, [F_SHARED] = 8,
                                       [F_DYNAMIC] = 1};
    w->flavor = f;
    w->disp_unit = units[f];
    w->attached = NULL;
    w->dyn_base = NULL;
    switch (f) {
    case F_CREATE:
        w->mem = malloc(bytes);
        CHECK(w->mem != NULL, "out of memory");
        MPICHK(MPI_Win_create(w->mem, (MPI_Aint)bytes, w->disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case F_CREATE_BIG:
        CHECK(bytes + BIG_OFFSET <= BIG_BLOCK, "window of %zu bytes does not fit the block", bytes);
        w->attached = malloc(BIG_BLOCK);
        CHECK(w->attached != NULL, "out of memory");
        w->mem = (unsigned char *)w->attached + BIG_OFFSET;
        MPICHK(MPI_Win_create(w->mem, (MPI_Aint)bytes, w->disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case F_ALLOCATE:
        MPICHK(MPI_Win_allocate((MPI_Aint)bytes, w->disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win));
        break;
    case F_SHARED:
        MPICHK(MPI_Win_allocate_shared((MPI_Aint)bytes, w->disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem,
                                       &w->win));
        break;
    case F_DYNAMIC: {
        MPI_Aint mine;
        MPICHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        w->mem = w->attached = malloc(bytes);
        CHECK(w->mem != NULL, "out of memory");
        MPICHK(MPI_Win_attach(w->win, w->mem, (MPI_Aint)bytes));
        MPICHK(MPI_Get_address(w->mem, &mine));
        w->dyn_base = malloc(sizeof(MPI_Aint) * (size_t)tu_size);
        CHECK(w->dyn_base != NULL, "out of memory");
        MPICHK(MPI_Allgather(&mine, 1, MPI_AINT, w->dyn_base, 1, MPI_AINT, MPI_COMM_WORLD));
        break;
    }
    default:
        break;
    }
    rt_win_errors_return(w->win);
}

static void window_close(struct window *w)
{
    if (w->flavor == F_DYNAMIC)
        MPICHK(MPI_Win_detach(w->win, w->attached));
    MPICHK(MPI_Win_free(&w->win));
    if (w->flavor == F_CREATE || w->flavor == F_DYNAMIC)
        free(w->mem);
    if (w->flavor == F_CREATE_BIG)
        free(w->attached);
    free(w->dyn_base);
}

/* Target displacement of byte offset off in rank t's window. */
static MPI_Aint window_disp(const struct window *w, int t, size_t off)
{
    if (w->flavor == F_DYNAMIC)
        return MPI_Aint_add(w->dyn_base[t], (MPI_Aint)off);
    return (MPI_Aint)(off / (size_t)w->disp_unit);
}

/* ----------------------------------------------------------- epochs */

struct epoch {
    enum flavor flavor;
    enum sync sync;
    int target, origin; /* whom I access, who accesses me */
};

static void fill_window(const struct matrix *mx, const struct window *w)
{
    for (int s = 0; s < mx->nslots; s++) {
        unsigned char *slot = w->mem + (size_t)s * SLOT_BYTES;
        for (int i = 0; i < SLOT_ELEMS; i++) {
            if (mx->slots[s].elem == MPI_LONG)
                ((long *)slot)[i] = target_init(tu_rank, s, i);
            else
                put_elem(slot, mx->slots[s].elem, i, target_init(tu_rank, s, i));
        }
    }
}

static long slot_get(const struct slot *sl, const void *buf, int i)
{
    return sl->elem == MPI_LONG ? ((const long *)buf)[i] : get_elem(buf, sl->elem, i);
}

static void slot_put(const struct slot *sl, void *buf, int i, long v)
{
    if (sl->elem == MPI_LONG)
        ((long *)buf)[i] = v;
    else
        put_elem(buf, sl->elem, i, v);
}

static void fill_origin(const struct matrix *mx, const struct epoch *ep)
{
    for (int s = 0; s < mx->nslots; s++) {
        const struct slot *sl = &mx->slots[s];
        unsigned char *o = mx->obuf + (size_t)s * SLOT_BYTES, *r = mx->rbuf + (size_t)s * SLOT_BYTES;
        unsigned char *c = mx->cbuf + (size_t)s * SLOT_BYTES;
        for (int i = 0; i < SLOT_ELEMS; i++) {
            slot_put(sl, o, i, origin_value(tu_rank, s, i));
            slot_put(sl, r, i, SENTINEL);
            slot_put(sl, c, i, SENTINEL);
        }
        if (sl->kind == K_CAS)
            slot_put(sl, c, 0, sl->cas_match ? target_init(ep->target, s, 0) : target_init(ep->target, s, 0) + 1);
    }
}

/* Issue slot s's operation towards ep->target. */
static void issue(struct matrix *mx, int s, const struct window *w, const struct epoch *ep)
{
    const struct slot *sl = &mx->slots[s];
    void *o = mx->obuf + (size_t)s * SLOT_BYTES, *r = mx->rbuf + (size_t)s * SLOT_BYTES;
    void *c = mx->cbuf + (size_t)s * SLOT_BYTES;
    MPI_Aint disp = window_disp(w, ep->target, (size_t)s * SLOT_BYTES);
    MPI_Datatype ot, tt;
    int oc, tc, oown, town, t = ep->target;
    MPI_Win win = w->win;
    MPI_Request *req = &mx->reqs[s];
    build_type(sl->olay, sl->elem, &ot, &oc, &oown);
    build_type(sl->tlay, sl->elem, &tt, &tc, &town);
    switch (sl->kind) {
    case K_PUT: MPICHK(MPI_Put(o, oc, ot, t, disp, tc, tt, win)); break;
    case K_GET: MPICHK(MPI_Get(r, oc, ot, t, disp, tc, tt, win)); break;
    case K_ACC: MPICHK(MPI_Accumulate(o, oc, ot, t, disp, tc, tt, sl->op, win)); break;
    case K_GACC: MPICHK(MPI_Get_accumulate(o, oc, ot, r, oc, ot, t, disp, tc, tt, sl->op, win)); break;
    case K_FOP: MPICHK(MPI_Fetch_and_op(o, r, sl->elem, t, disp, sl->op, win)); break;
    case K_CAS: MPICHK(MPI_Compare_and_swap(o, c, r, sl->elem, t, disp, win)); break;
    case K_RPUT: MPICHK(MPI_Rput(o, oc, ot, t, disp, tc, tt, win, req)); break;
    case K_RGET: MPICHK(MPI_Rget(r, oc, ot, t, disp, tc, tt, win, req)); break;
    case K_RACC: MPICHK(MPI_Raccumulate(o, oc, ot, t, disp, tc, tt, sl->op, win, req)); break;
    case K_RGACC:
        MPICHK(MPI_Rget_accumulate(o, oc, ot, r, oc, ot, t, disp, tc, tt, sl->op, win, req));
        break;
    }
    /* Freeing a type an operation uses is allowed: it stays alive until
     * the operation no longer needs it. */
    if (oown)
        MPICHK(MPI_Type_free(&ot));
    if (town)
        MPICHK(MPI_Type_free(&tt));
}

/* A wrong value: print it (the first few of each epoch); the epoch fails
 * at its end (fail_if_wrong) so that one run lists every broken case. */
static void report(struct matrix *mx, const struct epoch *ep, int s, const char *side, int i, long got, long want)
{
    const struct slot *sl = &mx->slots[s];
    const char *el = sl->elem == MPI_INT ? "MPI_INT" : sl->elem == MPI_DOUBLE ? "MPI_DOUBLE" : "MPI_LONG";
    if (mx->wrong++ < 20)
        fprintf(stderr,
                "FAIL rma_matrix: rank %d/%d: %s, %s, %s op %s, %s origin %s -> target %s, origin %d target %d: "
                "%s element %d is %ld, expected %ld\n",
                tu_rank, tu_size, flavor_name[ep->flavor], sync_name[ep->sync], kind_name[sl->kind],
                sl->op_name, el, layout_name[sl->olay], layout_name[sl->tlay], ep->origin, ep->target, side, i,
                got, want);
}

static void fail_if_wrong(struct matrix *mx, const struct epoch *ep)
{
    CHECK(mx->wrong == 0, "%d wrong values in the %s, %s epoch (listed above)", mx->wrong, flavor_name[ep->flavor],
          sync_name[ep->sync]);
}

/* My window after the epoch of ep->origin, who wrote into it. */
static void check_target(struct matrix *mx, const struct window *w, const struct epoch *ep)
{
    struct epoch me = *ep;
    me.target = tu_rank; /* the report names my origin and me */
    for (int s = 0; s < mx->nslots; s++) {
        const struct slot *sl = &mx->slots[s];
        const unsigned char *slot = w->mem + (size_t)s * SLOT_BYTES;
        long want[SLOT_ELEMS];
        int ooff[NELEM], toff[NELEM];
        int n = layout_offsets(sl->olay, ooff);
        layout_offsets(sl->tlay, toff);
        for (int i = 0; i < SLOT_ELEMS; i++)
            want[i] = target_init(tu_rank, s, i);
        if (slot_runs(sl, ep->sync)) {
            for (int k = 0; k < n; k++) {
                long ov = origin_value(ep->origin, s, ooff[k]);
                switch (sl->kind) {
                case K_PUT: case K_RPUT: want[toff[k]] = ov; break;
                case K_ACC: case K_RACC: case K_GACC: case K_RGACC: case K_FOP:
                    want[toff[k]] = apply(sl->op, want[toff[k]], ov);
                    break;
                case K_CAS:
                    if (sl->cas_match)
                        want[toff[k]] = ov;
                    break;
                default: break;
                }
            }
        }
        for (int i = 0; i < SLOT_ELEMS; i++) {
            long got = slot_get(sl, slot, i);
            if (got != want[i])
                report(mx, &me, s, "target", i, got, want[i]);
        }
    }
}

/* My origin buffers after my epoch towards ep->target. */
static void check_origin(struct matrix *mx, const struct epoch *ep)
{
    struct epoch me = *ep;
    me.origin = tu_rank; /* the report names me and my target */
    for (int s = 0; s < mx->nslots; s++) {
        const struct slot *sl = &mx->slots[s];
        const unsigned char *o = mx->obuf + (size_t)s * SLOT_BYTES, *r = mx->rbuf + (size_t)s * SLOT_BYTES;
        long want[SLOT_ELEMS];
        int ooff[NELEM], toff[NELEM];
        int n = layout_offsets(sl->olay, ooff);
        layout_offsets(sl->tlay, toff);
        for (int i = 0; i < SLOT_ELEMS; i++)
            want[i] = SENTINEL;
        if (fetching_kind(sl->kind) && slot_runs(sl, ep->sync))
            for (int k = 0; k < n; k++)
                want[ooff[k]] = target_init(ep->target, s, toff[k]);
        for (int i = 0; i < SLOT_ELEMS; i++) {
            long got = slot_get(sl, r, i);
            if (got != want[i])
                report(mx, &me, s, "origin result", i, got, want[i]);
            got = slot_get(sl, o, i);
            if (got != origin_value(tu_rank, s, i))
                report(mx, &me, s, "origin buffer (must stay unchanged)", i, got, origin_value(tu_rank, s, i));
        }
    }
}

static void issue_all(struct matrix *mx, const struct window *w, const struct epoch *ep)
{
    for (int s = 0; s < mx->nslots; s++) {
        mx->reqs[s] = MPI_REQUEST_NULL;
        if (slot_runs(&mx->slots[s], ep->sync))
            issue(mx, s, w, ep);
    }
    MPICHK(MPI_Waitall(mx->nslots, mx->reqs, MPI_STATUSES_IGNORE));
}

static void one_group(int rank, MPI_Group *g)
{
    MPI_Group world;
    MPICHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPICHK(MPI_Group_incl(world, 1, &rank, g));
    MPICHK(MPI_Group_free(&world));
}

/* Read my own window under a lock on myself (passive target: after the
 * origins unlocked and a barrier). */
static void check_target_locked(struct matrix *mx, const struct window *w, const struct epoch *ep)
{
    MPICHK(MPI_Win_lock(MPI_LOCK_SHARED, tu_rank, 0, w->win));
    check_target(mx, w, ep);
    MPICHK(MPI_Win_unlock(tu_rank, w->win));
}

static void run_epoch(struct matrix *mx, const struct window *w, const struct epoch *ep)
{
    int t = ep->target;
    switch (ep->sync) {
    case S_FENCE:
    case S_FENCE_ASSERT:
        MPICHK(MPI_Win_fence(ep->sync == S_FENCE ? 0 : MPI_MODE_NOPRECEDE, w->win));
        issue_all(mx, w, ep);
        MPICHK(MPI_Win_fence(ep->sync == S_FENCE ? 0 : MPI_MODE_NOSUCCEED, w->win));
        check_origin(mx, ep);
        check_target(mx, w, ep);
        break;
    case S_PSCW: {
        MPI_Group to, from;
        one_group(t, &to);
        one_group(ep->origin, &from);
        MPICHK(MPI_Win_post(from, 0, w->win));
        MPICHK(MPI_Win_start(to, 0, w->win));
        issue_all(mx, w, ep);
        MPICHK(MPI_Win_complete(w->win));
        MPICHK(MPI_Win_wait(w->win));
        MPICHK(MPI_Group_free(&to));
        MPICHK(MPI_Group_free(&from));
        check_origin(mx, ep);
        check_target(mx, w, ep);
        break;
    }
    case S_LOCK_SHARED:
    case S_LOCK_EXCL:
        MPICHK(MPI_Win_lock(ep->sync == S_LOCK_SHARED ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, t, 0, w->win));
        issue_all(mx, w, ep);
        MPICHK(MPI_Win_unlock(t, w->win));
        check_origin(mx, ep);
        MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        check_target_locked(mx, w, ep);
        break;
    default: {
        /* lock_all, then the flush under test completes the operations:
         * results are checked before unlock_all. After a remote flush the
         * target sees the data (barrier, then MPI_Win_sync for the
         * memory model). */
        int remote = ep->sync == S_LOCKALL_FLUSH || ep->sync == S_LOCKALL_FLUSH_ALL;
        MPICHK(MPI_Win_lock_all(0, w->win));
        issue_all(mx, w, ep);
        switch (ep->sync) {
        case S_LOCKALL_FLUSH: MPICHK(MPI_Win_flush(t, w->win)); break;
        case S_LOCKALL_FLUSH_LOCAL: MPICHK(MPI_Win_flush_local(t, w->win)); break;
        case S_LOCKALL_FLUSH_ALL: MPICHK(MPI_Win_flush_all(w->win)); break;
        default: MPICHK(MPI_Win_flush_local_all(w->win)); break;
        }
        check_origin(mx, ep);
        if (remote) {
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
            MPICHK(MPI_Win_sync(w->win));
            check_target(mx, w, ep);
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        }
        MPICHK(MPI_Win_unlock_all(w->win));
        if (!remote) {
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
            check_target_locked(mx, w, ep);
        }
        break;
    }
    }
}

/* The flavor named on the command line (create, allocate, shared,
 * dynamic), or -1 for all of them. */
static int flavor_arg(int argc, char **argv)
{
    static const char *const names[F_COUNT] = {"create", "create_big", "allocate", "shared", "dynamic"};
    if (argc < 2)
        return -1;
    for (int f = 0; f < F_COUNT; f++)
        if (strcmp(argv[1], names[f]) == 0)
            return f;
    CHECK(0, "unknown flavor %s (create, create_big, allocate, shared or dynamic)", argv[1]);
    return -1;
}

int main(int argc, char **argv)
{
    struct matrix mx;
    tu_init(&argc, &argv, "rma_matrix");
    build_slots(&mx);
    size_t bytes = (size_t)mx.nslots * SLOT_BYTES;
    mx.obuf = malloc(bytes);
    mx.rbuf = malloc(bytes);
    mx.cbuf = malloc(bytes);
    mx.reqs = malloc(sizeof *mx.reqs * (size_t)mx.nslots);
    CHECK(mx.obuf && mx.rbuf && mx.cbuf && mx.reqs, "out of memory");
    int one_node = rt_one_node(MPI_COMM_WORLD);
    int only = flavor_arg(argc, argv);

    for (int f = 0; f < F_COUNT; f++) {
        if ((only >= 0 && f != only) || (f == F_SHARED && !one_node))
            continue;
        struct window w;
        window_open(&w, (enum flavor)f, bytes);
        for (int m = 0; m < S_COUNT; m++) {
            /* A different partner for each mode: shift 1 .. size-1. */
            int shift = tu_size > 1 ? 1 + (f * S_COUNT + m) % (tu_size - 1) : 0;
            struct epoch ep = {(enum flavor)f, (enum sync)m, (tu_rank + shift) % tu_size,
                               (tu_rank - shift + tu_size) % tu_size};
            /* Everybody's window is initialised before anybody's epoch
             * starts (local stores, then a barrier; lock_all epochs see
             * them after MPI_Win_sync). */
            MPICHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tu_rank, 0, w.win));
            fill_window(&mx, &w);
            MPICHK(MPI_Win_unlock(tu_rank, w.win));
            fill_origin(&mx, &ep);
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
            mx.wrong = 0;
            run_epoch(&mx, &w, &ep);
            fail_if_wrong(&mx, &ep);
            MPICHK(MPI_Barrier(MPI_COMM_WORLD));
        }
        window_close(&w);
    }
    free(mx.obuf);
    free(mx.rbuf);
    free(mx.cbuf);
    free(mx.reqs);
    free(mx.slots);
    tu_finish();
    return 0;
}
