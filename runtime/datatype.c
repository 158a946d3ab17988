/*
 * Datatype objects: the handle table, the predefined types, reference
 * counting, and the layout arithmetic (size, bounds, extent) of derived
 * types. Compiling a layout for fast packing is dt_node.c; moving data is
 * dt_pack.c; the MPI functions are type_api.c.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/datatype_impl.h"
#include "runtime/error.h"

/* Derived handles: kind "indirect" (bits 30-31 = 11), object "datatype"
 * (bits 26-29 = 0011), then a generation and the slot. The generation makes
 * a stale handle invalid for a while after its slot is reused. */
#define DT_DERIVED_TAG 0xcc000000u
#define DT_TAG_MASK    0xfc000000u
#define DT_SLOT_BITS   20
#define DT_GEN_BITS    6
#define DT_SLOT_MASK   ((1u << DT_SLOT_BITS) - 1)
#define DT_GEN_MASK    ((1u << DT_GEN_BITS) - 1)
#define DT_BUILTIN_TAG 0x4c000000u
#define DT_PAIR_TAG    0x8c000000u

/* Predefined types as mpi.h numbers them. */
struct dt_desc {
    MPI_Datatype h;
    const char *name;
    unsigned char size, align, kind;
    MPI_Datatype a, b; /* pair types: value type at 0, index type at boff */
    unsigned char boff;
};

struct pair_fi { float v; int i; };
struct pair_di { double v; int i; };
struct pair_li { long v; int i; };
struct pair_si { short v; int i; };
struct pair_ldi { long double v; int i; };
struct pair_ii { int v; int i; };
struct pair_ff { float v; float i; };
struct pair_dd { double v; double i; };

#define BT(h, T, k) {h, #h, sizeof(T), _Alignof(T), BMPI_DT_K_##k, 0, 0, 0}
#define PT(h, S, A, B) {h, #h, sizeof(struct S), _Alignof(struct S), BMPI_DT_K_PAIR, A, B, offsetof(struct S, i)}

static const struct dt_desc dt_builtin_desc[] = {
    BT(MPI_CHAR, char, BYTE),
    BT(MPI_SIGNED_CHAR, signed char, INT),
    BT(MPI_UNSIGNED_CHAR, unsigned char, UINT),
    BT(MPI_BYTE, unsigned char, BYTE),
    BT(MPI_WCHAR, wchar_t, UINT),
    BT(MPI_SHORT, short, INT),
    BT(MPI_UNSIGNED_SHORT, unsigned short, UINT),
    BT(MPI_INT, int, INT),
    BT(MPI_UNSIGNED, unsigned, UINT),
    BT(MPI_LONG, long, INT),
    BT(MPI_UNSIGNED_LONG, unsigned long, UINT),
    BT(MPI_FLOAT, float, FLOAT),
    BT(MPI_DOUBLE, double, FLOAT),
    BT(MPI_LONG_DOUBLE, long double, FLOAT),
    BT(MPI_LONG_LONG_INT, long long, INT),
    BT(MPI_UNSIGNED_LONG_LONG, unsigned long long, UINT),
    BT(MPI_PACKED, unsigned char, BYTE),
#ifdef MPI_LB
    {MPI_LB, "MPI_LB", 0, 1, BMPI_DT_K_MARKER, 0, 0, 0},
#endif
#ifdef MPI_UB
    {MPI_UB, "MPI_UB", 0, 1, BMPI_DT_K_MARKER, 0, 0, 0},
#endif
#ifdef MPI_INT8_T
    BT(MPI_INT8_T, int8_t, INT),
    BT(MPI_INT16_T, int16_t, INT),
    BT(MPI_INT32_T, int32_t, INT),
    BT(MPI_INT64_T, int64_t, INT),
    BT(MPI_UINT8_T, uint8_t, UINT),
    BT(MPI_UINT16_T, uint16_t, UINT),
    BT(MPI_UINT32_T, uint32_t, UINT),
    BT(MPI_UINT64_T, uint64_t, UINT),
#endif
#ifdef MPI_C_BOOL
    BT(MPI_C_BOOL, _Bool, UINT),
#endif
#ifdef MPI_C_FLOAT_COMPLEX
    BT(MPI_C_FLOAT_COMPLEX, float _Complex, COMPLEX),
    BT(MPI_C_DOUBLE_COMPLEX, double _Complex, COMPLEX),
    BT(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, COMPLEX),
#endif
#ifdef MPIX_C_FLOAT16
    BT(MPIX_C_FLOAT16, uint16_t, FLOAT),
#endif
#ifdef MPI_AINT
    BT(MPI_AINT, MPI_Aint, INT),
    BT(MPI_OFFSET, MPI_Offset, INT),
#endif
#ifdef MPI_COUNT
    BT(MPI_COUNT, MPI_Count, INT),
#endif
#ifdef MPI_CXX_BOOL
    BT(MPI_CXX_BOOL, _Bool, UINT),
    BT(MPI_CXX_FLOAT_COMPLEX, float _Complex, COMPLEX),
    BT(MPI_CXX_DOUBLE_COMPLEX, double _Complex, COMPLEX),
    BT(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, COMPLEX),
#endif
    /* Fortran names, with the layout of their usual C equivalents */
#ifdef MPI_INTEGER
    BT(MPI_COMPLEX, float _Complex, COMPLEX),
    BT(MPI_DOUBLE_COMPLEX, double _Complex, COMPLEX),
    BT(MPI_LOGICAL, int, INT),
    BT(MPI_REAL, float, FLOAT),
    BT(MPI_DOUBLE_PRECISION, double, FLOAT),
    BT(MPI_INTEGER, int, INT),
    BT(MPI_CHARACTER, char, BYTE),
#endif
#ifdef MPI_REAL4
    BT(MPI_REAL4, float, FLOAT),
    BT(MPI_REAL8, double, FLOAT),
    BT(MPI_REAL16, long double, FLOAT),
    BT(MPI_COMPLEX8, float _Complex, COMPLEX),
    BT(MPI_COMPLEX16, double _Complex, COMPLEX),
    BT(MPI_COMPLEX32, long double _Complex, COMPLEX),
    BT(MPI_INTEGER1, int8_t, INT),
    BT(MPI_INTEGER2, int16_t, INT),
    BT(MPI_INTEGER4, int32_t, INT),
    BT(MPI_INTEGER8, int64_t, INT),
#endif
};

/* Pair types refer to basic ones, so they are set up second. */
static const struct dt_desc dt_pair_desc[] = {
    PT(MPI_2INT, pair_ii, MPI_INT, MPI_INT),
    PT(MPI_FLOAT_INT, pair_fi, MPI_FLOAT, MPI_INT),
    PT(MPI_DOUBLE_INT, pair_di, MPI_DOUBLE, MPI_INT),
    PT(MPI_LONG_INT, pair_li, MPI_LONG, MPI_INT),
    PT(MPI_SHORT_INT, pair_si, MPI_SHORT, MPI_INT),
    PT(MPI_LONG_DOUBLE_INT, pair_ldi, MPI_LONG_DOUBLE, MPI_INT),
#ifdef MPI_2INTEGER
    PT(MPI_2INTEGER, pair_ii, MPI_INTEGER, MPI_INTEGER),
    PT(MPI_2REAL, pair_ff, MPI_REAL, MPI_REAL),
    PT(MPI_2DOUBLE_PRECISION, pair_dd, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION),
#endif
};

#define DT_NBUILTIN (sizeof dt_builtin_desc / sizeof dt_builtin_desc[0])
#define DT_NPAIR (sizeof dt_pair_desc / sizeof dt_pair_desc[0])

/* The one piece of process-wide datatype state. */
static struct bmpi_dt_table {
    bool ready;
    struct bmpi_datatype builtin[DT_NBUILTIN + DT_NPAIR];
    struct bmpi_datatype *by_index[256]; /* 0x4c00SSII by II */
    struct bmpi_datatype *pair[16];      /* 0x8c00000I by I */
    /* pair contents: 3 ints, 2 aints, 2 types each */
    int pair_ints[DT_NPAIR][3];
    MPI_Aint pair_aints[DT_NPAIR][2];
    struct bmpi_datatype *pair_types[DT_NPAIR][2];

    struct bmpi_datatype **slot; /* derived types by slot */
    uint8_t *gen;                /* generation of each slot */
    uint32_t nslots, cap;        /* slots ever used, allocated */
    uint32_t *free_slots;        /* reusable slots (LIFO) */
    uint32_t nfree;

    /* MPI_Type_create_f90_*: one type per (combiner, p, r), kept to finalize */
    struct dt_f90 { int combiner, p, r; struct bmpi_datatype *dt; } *f90;
    int nf90;
} dt_table;

static struct bmpi_dt_node *leaf_node(size_t size)
{
    struct bmpi_dt_node *n = calloc(1, sizeof *n + (size ? sizeof n->segs[0] : 0));
    if (!n)
        return NULL;
    n->refs = 1;
    n->depth = 1;
    n->size = size;
    if (size) {
        n->nsegs = 1;
        n->segs[0] = (struct bmpi_dt_seg){.disp = 0, .stride = 0, .count = 1, .blen = size};
    }
    return n;
}

static struct bmpi_datatype *dt_lookup(MPI_Datatype h);

static int dt_setup(void)
{
    struct bmpi_dt_table *t = &dt_table;
    if (t->ready)
        return BMPI_OK;
    size_t nb = 0;
    for (size_t i = 0; i < DT_NBUILTIN; i++) {
        const struct dt_desc *d = &dt_builtin_desc[i];
        if (d->h == MPI_DATATYPE_NULL)
            continue;
        struct bmpi_datatype *dt = &t->builtin[nb++];
        *dt = (struct bmpi_datatype){
            .handle = d->h,
            .refs = 1,
            .user_refs = 1,
            .flags = BMPI_DT_PREDEFINED | BMPI_DT_COMMITTED,
            .kind = d->kind,
            .combiner = MPI_COMBINER_NAMED,
            .defn = MPI_COMBINER_NAMED,
            .basic = d->kind == BMPI_DT_K_MARKER ? MPI_DATATYPE_NULL : d->h,
            .align = d->align,
            .size = d->size,
            .lb = 0,
            .ub = d->size,
            .true_lb = 0,
            .true_ub = d->size,
            .nelem = d->size ? 1 : 0,
        };
        if (d->kind == BMPI_DT_K_MARKER)
            dt->flags |= strcmp(d->name, "MPI_LB") == 0 ? BMPI_DT_LB_MARK : BMPI_DT_UB_MARK;
        dt->node = leaf_node(d->size);
        if (!dt->node)
            goto nomem;
        if (d->size)
            dt->flags |= BMPI_DT_CONTIG;
        t->by_index[(uint32_t)d->h & 0xffu] = dt;
    }
    for (size_t i = 0; i < DT_NPAIR; i++) {
        const struct dt_desc *d = &dt_pair_desc[i];
        struct bmpi_datatype *dt = &t->builtin[nb++];
        struct bmpi_datatype *a = dt_lookup(d->a), *b = dt_lookup(d->b);
        t->pair_ints[i][0] = 2;
        t->pair_ints[i][1] = 1;
        t->pair_ints[i][2] = 1;
        t->pair_aints[i][0] = 0;
        t->pair_aints[i][1] = d->boff;
        t->pair_types[i][0] = a;
        t->pair_types[i][1] = b;
        *dt = (struct bmpi_datatype){
            .handle = d->h,
            .refs = 1,
            .user_refs = 1,
            .flags = BMPI_DT_PREDEFINED | BMPI_DT_COMMITTED | BMPI_DT_PAIR,
            .kind = BMPI_DT_K_PAIR,
            .combiner = MPI_COMBINER_NAMED,
            .defn = MPI_COMBINER_STRUCT,
            .basic = d->h,
            .align = d->align,
            .size = a->size + b->size,
            .lb = 0,
            .ub = d->size,
            .true_lb = 0,
            .true_ub = d->boff + b->size,
            .nelem = 2,
            .n_ints = 3,
            .n_aints = 2,
            .n_types = 2,
            .ints = t->pair_ints[i],
            .aints = t->pair_aints[i],
            .types = t->pair_types[i],
        };
        if (bmpi_dt_compile(dt))
            goto nomem;
        if ((uint32_t)d->h >> 24 == 0x8c)
            t->pair[(uint32_t)d->h & 0xfu] = dt;
        else
            t->by_index[(uint32_t)d->h & 0xffu] = dt;
    }
    t->ready = true;
    return BMPI_OK;
nomem:
    for (size_t i = 0; i < nb; i++)
        if (t->builtin[i].node)
            bmpi_dt_node_release(t->builtin[i].node);
    memset(t, 0, sizeof *t);
    return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for the predefined datatypes");
}

int bmpi_dt_init(void) { return dt_setup(); }

static void dt_destroy(struct bmpi_datatype *dt);

void bmpi_dt_finalize(void)
{
    struct bmpi_dt_table *t = &dt_table;
    if (!t->ready)
        return;
    /* Drop the user's references; what the types hold on each other goes
     * with them. Whatever a leaked request still retains stays (and leaks). */
    for (uint32_t i = 0; i < t->nslots; i++) {
        struct bmpi_datatype *dt = t->slot[i];
        if (!dt || dt->user_refs == 0 || (dt->flags & BMPI_DT_NOFREE))
            continue;
        dt->refs -= dt->user_refs;
        dt->user_refs = 0;
        if (dt->refs <= 0)
            dt_destroy(dt);
    }
    /* the F90 types cannot be freed by the user: they go after the others */
    for (int i = 0; i < t->nf90; i++) {
        struct bmpi_datatype *dt = t->f90[i].dt;
        dt->flags &= ~BMPI_DT_NOFREE;
        bmpi_dt_user_free(dt);
    }
    free(t->f90);
    for (size_t i = 0; i < DT_NBUILTIN + DT_NPAIR; i++) {
        struct bmpi_datatype *dt = &t->builtin[i];
        if (dt->node)
            bmpi_dt_node_release(dt->node);
        free(dt->name);
    }
    free(t->slot);
    free(t->gen);
    free(t->free_slots);
    memset(t, 0, sizeof *t);
}

static struct bmpi_datatype *dt_lookup(MPI_Datatype h)
{
    struct bmpi_dt_table *t = &dt_table;
    uint32_t u = (uint32_t)h;
    struct bmpi_datatype *dt = NULL;
    switch (u & DT_TAG_MASK) {
    case DT_BUILTIN_TAG:
        dt = t->by_index[u & 0xffu];
        break;
    case DT_PAIR_TAG:
        if ((u & ~0xfu) == DT_PAIR_TAG)
            dt = t->pair[u & 0xfu];
        break;
    case DT_DERIVED_TAG: {
        uint32_t s = u & DT_SLOT_MASK;
        if (s < t->nslots)
            dt = t->slot[s];
        if (dt && dt->user_refs <= 0)
            dt = NULL;
        break;
    }
    }
    return dt && dt->handle == h ? dt : NULL;
}

struct bmpi_datatype *bmpi_dt_get(MPI_Datatype h)
{
    if (!dt_table.ready && dt_setup())
        return NULL;
    return dt_lookup(h);
}

int bmpi_dt_check_usable(MPI_Datatype h, struct bmpi_datatype **out)
{
    struct bmpi_datatype *dt = bmpi_dt_get(h);
    if (!dt) {
        if (h == MPI_DATATYPE_NULL)
            return bmpi_err_set(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
        return bmpi_err_set(MPI_ERR_TYPE, "invalid datatype 0x%x (not a datatype, or freed)",
                            (unsigned)h);
    }
    if (!(dt->flags & BMPI_DT_COMMITTED))
        return bmpi_err_set(MPI_ERR_TYPE, "%s is not committed (call MPI_Type_commit first)",
                            bmpi_dt_name(h));
    *out = dt;
    return BMPI_OK;
}

const char *bmpi_dt_name(MPI_Datatype h)
{
    static _Thread_local char buf[MPI_MAX_OBJECT_NAME + 32];
    struct bmpi_datatype *dt = bmpi_dt_get(h);
    if (h == MPI_DATATYPE_NULL)
        return "MPI_DATATYPE_NULL";
    if (dt && (dt->name || (dt->flags & BMPI_DT_PREDEFINED)))
        return bmpi_dt_get_name(dt);
    snprintf(buf, sizeof buf, "datatype 0x%x", (unsigned)h);
    return buf;
}

const char *bmpi_dt_get_name(const struct bmpi_datatype *dt)
{
    if (dt->name)
        return dt->name;
    if (dt->flags & BMPI_DT_PREDEFINED) {
        for (size_t i = 0; i < DT_NBUILTIN; i++)
            if (dt_builtin_desc[i].h == dt->handle)
                return dt_builtin_desc[i].name;
        for (size_t i = 0; i < DT_NPAIR; i++)
            if (dt_pair_desc[i].h == dt->handle)
                return dt_pair_desc[i].name;
    }
    return "";
}

int bmpi_dt_set_name(struct bmpi_datatype *dt, const char *name)
{
    size_t len = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    char *copy = malloc(len + 1);
    if (!copy)
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a datatype name");
    memcpy(copy, name, len);
    copy[len] = '\0';
    free(dt->name);
    dt->name = copy;
    return BMPI_OK;
}

enum bmpi_dt_kind bmpi_dt_kind(const struct bmpi_datatype *dt) { return dt->kind; }

/* --- lifetime ---------------------------------------------------------------- */

void bmpi_dt_retain(struct bmpi_datatype *dt)
{
    if (!(dt->flags & BMPI_DT_PREDEFINED))
        dt->refs++;
}

void bmpi_dt_release(struct bmpi_datatype *dt)
{
    if (dt->flags & BMPI_DT_PREDEFINED)
        return;
    if (--dt->refs == 0)
        dt_destroy(dt);
}

static void dt_destroy(struct bmpi_datatype *dt)
{
    struct bmpi_dt_table *t = &dt_table;
    if (dt->handle != MPI_DATATYPE_NULL) {
        uint32_t s = (uint32_t)dt->handle & DT_SLOT_MASK;
        if (s < t->nslots && t->slot[s] == dt) {
            t->slot[s] = NULL;
            t->gen[s] = (uint8_t)((t->gen[s] + 1) & DT_GEN_MASK);
            t->free_slots[t->nfree++] = s;
        }
    }
    if (dt->node)
        bmpi_dt_node_release(dt->node);
    for (int i = 0; i < dt->n_types; i++)
        bmpi_dt_release(dt->types[i]);
    if (dt->inner)
        bmpi_dt_release(dt->inner);
    free(dt->name);
    free(dt); /* contents live in the same allocation */
}

int bmpi_dt_register(struct bmpi_datatype *dt, MPI_Datatype *h)
{
    struct bmpi_dt_table *t = &dt_table;
    uint32_t s;
    if (t->nfree) {
        s = t->free_slots[--t->nfree];
    } else {
        if (t->nslots == t->cap) {
            uint32_t cap = t->cap ? 2 * t->cap : 64;
            if (cap > DT_SLOT_MASK + 1u)
                cap = DT_SLOT_MASK + 1u;
            if (cap == t->cap) {
                bmpi_dt_release(dt);
                return bmpi_err_set(MPI_ERR_INTERN,
                                    "too many datatypes alive (%u); free some with MPI_Type_free",
                                    (unsigned)t->cap);
            }
            struct bmpi_datatype **slot = realloc(t->slot, cap * sizeof *slot);
            if (slot)
                t->slot = slot;
            uint8_t *gen = realloc(t->gen, cap);
            if (gen)
                t->gen = gen;
            uint32_t *fs = realloc(t->free_slots, cap * sizeof *fs);
            if (fs)
                t->free_slots = fs;
            if (!slot || !gen || !fs) {
                bmpi_dt_release(dt);
                return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for the datatype table");
            }
            t->cap = cap;
        }
        s = t->nslots++;
        t->gen[s] = 0;
    }
    t->slot[s] = dt;
    dt->handle = (MPI_Datatype)(DT_DERIVED_TAG | (uint32_t)t->gen[s] << DT_SLOT_BITS | s);
    dt->user_refs = 1;
    *h = dt->handle;
    return BMPI_OK;
}

void bmpi_dt_user_free(struct bmpi_datatype *dt)
{
    if (dt->flags & BMPI_DT_PREDEFINED)
        return;
    dt->user_refs--;
    bmpi_dt_release(dt);
}

MPI_Datatype bmpi_dt_user_handle(struct bmpi_datatype *dt)
{
    if (dt->flags & (BMPI_DT_PREDEFINED | BMPI_DT_NOFREE))
        return dt->handle; /* not the user's to free */
    dt->refs++;
    dt->user_refs++;
    return dt->handle;
}

/* --- parts -------------------------------------------------------------------- */

/* Integer k and address k of the constructor's arguments, in either form. */
static inline MPI_Count int_arg(const struct bmpi_datatype *dt, size_t k)
{
    return dt->counts ? dt->counts[k] : dt->ints[k];
}

static inline MPI_Aint addr_arg(const struct bmpi_datatype *dt, size_t k)
{
    return dt->counts ? (MPI_Aint)dt->counts[(size_t)dt->a_off + k] : dt->aints[k];
}

size_t bmpi_dt_nparts(const struct bmpi_datatype *dt)
{
    switch (dt->defn) {
    case MPI_COMBINER_NAMED:
        return 0;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
        return (size_t)int_arg(dt, 0);
    default:
        return 1;
    }
}

/* Decode part i; false if its byte displacement or stride overflows
 * (only possible while a type is being created). */
static bool dt_part_checked(const struct bmpi_datatype *dt, size_t i, struct bmpi_dt_part *p)
{
    struct bmpi_datatype *T = dt->n_types ? dt->types[0] : NULL;
    MPI_Aint ext = T ? T->ub - T->lb : 0;
    *p = (struct bmpi_dt_part){.disp = 0, .count = 1, .stride = 0, .bl = 1, .type = T};
    switch (dt->defn) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        return true;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        p->type = dt->inner;
        return true;
    case MPI_COMBINER_CONTIGUOUS:
        p->bl = int_arg(dt, 0);
        return true;
    case MPI_COMBINER_VECTOR:
        p->count = int_arg(dt, 0);
        p->bl = int_arg(dt, 1);
        return !__builtin_mul_overflow((MPI_Aint)int_arg(dt, 2), ext, &p->stride);
    case MPI_COMBINER_HVECTOR:
        p->count = int_arg(dt, 0);
        p->bl = int_arg(dt, 1);
        p->stride = addr_arg(dt, 0);
        return true;
    case MPI_COMBINER_INDEXED:
        p->bl = int_arg(dt, 1 + i);
        return !__builtin_mul_overflow((MPI_Aint)int_arg(dt, 1 + (size_t)int_arg(dt, 0) + i), ext,
                                       &p->disp);
    case MPI_COMBINER_HINDEXED:
        p->bl = int_arg(dt, 1 + i);
        p->disp = addr_arg(dt, i);
        return true;
    case MPI_COMBINER_INDEXED_BLOCK:
        p->bl = int_arg(dt, 1);
        return !__builtin_mul_overflow((MPI_Aint)int_arg(dt, 2 + i), ext, &p->disp);
    case MPI_COMBINER_HINDEXED_BLOCK:
        p->bl = int_arg(dt, 1);
        p->disp = addr_arg(dt, i);
        return true;
    case MPI_COMBINER_STRUCT:
        p->bl = int_arg(dt, 1 + i);
        p->disp = addr_arg(dt, i);
        p->type = dt->types[i];
        return true;
    }
    return false;
}

void bmpi_dt_part(const struct bmpi_datatype *dt, size_t i, struct bmpi_dt_part *p)
{
    (void)dt_part_checked(dt, i, p);
}

/* --- layout --------------------------------------------------------------------- */

/* lo/hi += the extreme values of (n-1)*step (n >= 1). */
static bool spread(MPI_Aint *lo, MPI_Aint *hi, MPI_Count n, MPI_Aint step)
{
    MPI_Aint d;
    if (__builtin_mul_overflow((MPI_Aint)(n - 1), step, &d))
        return false;
    return d < 0 ? !__builtin_add_overflow(*lo, d, lo) : !__builtin_add_overflow(*hi, d, hi);
}

static inline bool is_marker(const struct bmpi_datatype *T, unsigned mark)
{
    return T->kind == BMPI_DT_K_MARKER && (T->flags & mark);
}

static int dt_layout(struct bmpi_datatype *dt, const char **why)
{
    bool any_lb = false, any_ub = false, any_lbm = false, any_ubm = false, any_data = false;
    MPI_Aint lb = 0, ub = 0, lbm = 0, ubm = 0, tlb = 0, tub = 0;
    MPI_Count size = 0, nelem = 0;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    bool basic_set = false, mixed = false;
    int align = 1;
    size_t n = bmpi_dt_nparts(dt);

    for (size_t i = 0; i < n; i++) {
        struct bmpi_dt_part p;
        if (!dt_part_checked(dt, i, &p)) {
            *why = "a displacement or stride in bytes overflows MPI_Aint";
            return BMPI_ERR_TOO_LARGE;
        }
        const struct bmpi_datatype *T = p.type;
        MPI_Count reps;
        if (__builtin_mul_overflow(p.count, p.bl, &reps)) {
            *why = "count times blocklength overflows MPI_Count";
            return BMPI_ERR_TOO_LARGE;
        }
        if (reps == 0 || (T->flags & BMPI_DT_EMPTY))
            continue;
        MPI_Count s, e;
        if (__builtin_mul_overflow(reps, T->size, &s) || __builtin_add_overflow(size, s, &size) ||
            __builtin_mul_overflow(reps, T->nelem, &e) || __builtin_add_overflow(nelem, e, &nelem)) {
            *why = "the size of the type overflows MPI_Count";
            return BMPI_ERR_TOO_LARGE;
        }
        /* range of the instances' base addresses */
        MPI_Aint dlo = p.disp, dhi = p.disp;
        if (!spread(&dlo, &dhi, p.count, p.stride) ||
            !spread(&dlo, &dhi, p.bl, T->ub - T->lb)) {
            *why = "the extent of the type overflows MPI_Aint";
            return BMPI_ERR_TOO_LARGE;
        }
        MPI_Aint v;
        if (T->kind != BMPI_DT_K_MARKER && T->align > align)
            align = T->align;
        if (!is_marker(T, BMPI_DT_UB_MARK)) { /* MPI_UB has no lower bound to give */
            if (__builtin_add_overflow(dlo, T->lb, &v))
                goto overflow;
            if (T->flags & BMPI_DT_LB_MARK) {
                lbm = any_lbm ? (v < lbm ? v : lbm) : v;
                any_lbm = true;
            } else {
                lb = any_lb ? (v < lb ? v : lb) : v;
                any_lb = true;
            }
        }
        if (!is_marker(T, BMPI_DT_LB_MARK)) {
            if (__builtin_add_overflow(dhi, T->ub, &v))
                goto overflow;
            if (T->flags & BMPI_DT_UB_MARK) {
                ubm = any_ubm ? (v > ubm ? v : ubm) : v;
                any_ubm = true;
            } else {
                ub = any_ub ? (v > ub ? v : ub) : v;
                any_ub = true;
            }
        }
        if (T->size > 0) {
            MPI_Aint a, b;
            if (__builtin_add_overflow(dlo, T->true_lb, &a) || __builtin_add_overflow(dhi, T->true_ub, &b))
                goto overflow;
            tlb = any_data ? (a < tlb ? a : tlb) : a;
            tub = any_data ? (b > tub ? b : tub) : b;
            any_data = true;
            if (!basic_set) {
                basic = T->basic;
                basic_set = true;
            } else if (T->basic != basic) {
                mixed = true;
            }
        }
    }
    dt->size = size;
    dt->nelem = nelem;
    dt->align = align;
    dt->basic = mixed ? MPI_DATATYPE_NULL : basic;
    dt->flags &= ~(BMPI_DT_LB_MARK | BMPI_DT_UB_MARK | BMPI_DT_EMPTY);
    if (!any_lb && !any_ub && !any_lbm && !any_ubm)
        dt->flags |= BMPI_DT_EMPTY;
    if (any_lbm)
        dt->flags |= BMPI_DT_LB_MARK;
    if (any_ubm)
        dt->flags |= BMPI_DT_UB_MARK;
    dt->lb = any_lbm ? lbm : any_lb ? lb : 0;
    dt->ub = any_ubm ? ubm : any_ub ? ub : dt->lb;
    dt->true_lb = any_data ? tlb : 0;
    dt->true_ub = any_data ? tub : 0;

    if (dt->defn == MPI_COMBINER_RESIZED) {
        dt->lb = addr_arg(dt, 0);
        if (__builtin_add_overflow(dt->lb, addr_arg(dt, 1), &dt->ub))
            goto overflow;
        dt->flags = (dt->flags & ~BMPI_DT_EMPTY) | BMPI_DT_LB_MARK | BMPI_DT_UB_MARK;
    }
    /* A struct's extent is padded to its alignment, as a C struct's is
     * (MPI's "epsilon"), unless an upper bound was set explicitly. */
    if (dt->defn == MPI_COMBINER_STRUCT && !any_ubm && align > 1) {
        MPI_Aint ext = dt->ub - dt->lb;
        if (ext > 0 && ext % align)
            if (__builtin_add_overflow(dt->ub, align - ext % align, &dt->ub))
                goto overflow;
    }
    return BMPI_OK;
overflow:
    *why = "the extent of the type overflows MPI_Aint";
    return BMPI_ERR_TOO_LARGE;
}

/* The arguments a type keeps for MPI_Type_get_contents, in their two forms
 * (struct bmpi_datatype). */
struct dt_args {
    int n_ints, n_aints, n_counts, a_off;
    const int *ints;
    const MPI_Aint *aints;
    const MPI_Count *counts;
};

static int dt_new(int combiner, const struct dt_args *a, int n_types,
                  struct bmpi_datatype *const *types, struct bmpi_datatype *inner,
                  struct bmpi_datatype **out)
{
    size_t bytes = sizeof(struct bmpi_datatype);
    size_t off_aints = (bytes + (size_t)a->n_ints * sizeof(int) + 7) & ~(size_t)7;
    size_t off_counts = off_aints + (size_t)a->n_aints * sizeof(MPI_Aint);
    size_t off_types = off_counts + (size_t)a->n_counts * sizeof(MPI_Count);
    bytes = off_types + (size_t)n_types * sizeof(struct bmpi_datatype *);
    char *mem = malloc(bytes);
    if (!mem) {
        if (inner)
            bmpi_dt_release(inner);
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a datatype (%zu bytes)", bytes);
    }
    struct bmpi_datatype *dt = (struct bmpi_datatype *)mem;
    *dt = (struct bmpi_datatype){
        .handle = MPI_DATATYPE_NULL,
        .refs = 1,
        .user_refs = 0,
        .kind = BMPI_DT_K_NONE,
        .combiner = combiner,
        .defn = combiner,
        .n_ints = a->n_ints,
        .n_aints = a->n_aints,
        .n_types = n_types,
        .ints = (int *)(mem + sizeof *dt),
        .aints = (MPI_Aint *)(mem + off_aints),
        .types = (struct bmpi_datatype **)(mem + off_types),
        .inner = inner,
        .n_counts = a->n_counts,
        .a_off = a->a_off,
        .counts = a->n_counts ? (MPI_Count *)(mem + off_counts) : NULL,
    };
    if (a->n_ints)
        memcpy(dt->ints, a->ints, (size_t)a->n_ints * sizeof(int));
    if (a->n_aints)
        memcpy(dt->aints, a->aints, (size_t)a->n_aints * sizeof(MPI_Aint));
    if (a->n_counts)
        memcpy(dt->counts, a->counts, (size_t)a->n_counts * sizeof(MPI_Count));
    for (int i = 0; i < n_types; i++) {
        dt->types[i] = types[i];
        bmpi_dt_retain(types[i]);
    }
    const char *why = NULL;
    int rc = dt_layout(dt, &why);
    if (rc) {
        bmpi_err_set(rc, "%s", why);
        bmpi_dt_release(dt);
        return rc;
    }
    *out = dt;
    return BMPI_OK;
}

int bmpi_dt_create(int combiner, int n_ints, const int *ints, int n_aints, const MPI_Aint *aints,
                   int n_types, struct bmpi_datatype *const *types, struct bmpi_datatype *inner,
                   struct bmpi_datatype **out)
{
    struct dt_args a = {.n_ints = n_ints, .n_aints = n_aints, .ints = ints, .aints = aints};
    return dt_new(combiner, &a, n_types, types, inner, out);
}

int bmpi_dt_create_large(int combiner, int n_counts, const MPI_Count *counts, int a_off,
                         int n_types, struct bmpi_datatype *const *types,
                         struct bmpi_datatype **out)
{
    struct dt_args a = {.n_counts = n_counts, .a_off = a_off, .counts = counts};
    return dt_new(combiner, &a, n_types, types, NULL, out);
}

int bmpi_dt_commit(struct bmpi_datatype *dt)
{
    int rc = bmpi_dt_compile(dt);
    if (rc)
        return rc;
    dt->flags |= BMPI_DT_COMMITTED;
    return BMPI_OK;
}

/* --- queries ------------------------------------------------------------------ */

bool bmpi_dt_total(const struct bmpi_datatype *dt, size_t count, size_t *bytes)
{
    return !__builtin_mul_overflow(count, (size_t)dt->size, bytes);
}

void bmpi_dt_span(const struct bmpi_datatype *dt, size_t count, MPI_Aint *lo, MPI_Aint *hi)
{
    if (count == 0 || dt->size == 0) {
        *lo = *hi = 0;
        return;
    }
    MPI_Aint step = (MPI_Aint)(count - 1) * (dt->ub - dt->lb);
    *lo = dt->true_lb + (step < 0 ? step : 0);
    *hi = dt->true_ub + (step > 0 ? step : 0);
}

MPI_Count bmpi_dt_elements(const struct bmpi_datatype *dt, MPI_Count bytes)
{
    if (bytes == 0)
        return 0;
    if (dt->size == 0)
        return -1;
    MPI_Count full = bytes / dt->size, rem = bytes % dt->size;
    MPI_Count n = full * dt->nelem;
    if (rem == 0)
        return n;
    if (dt->defn == MPI_COMBINER_NAMED)
        return -1; /* ends inside a basic element */
    /* walk the parts in type-map order down to the partial one */
    size_t np = bmpi_dt_nparts(dt);
    for (size_t i = 0; i < np && rem > 0; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(dt, i, &p);
        const struct bmpi_datatype *T = p.type;
        if (T->size == 0)
            continue;
        MPI_Count reps = p.count * p.bl, psize = reps * T->size;
        if (rem >= psize) {
            n += reps * T->nelem;
            rem -= psize;
            continue;
        }
        n += rem / T->size * T->nelem;
        rem %= T->size;
        if (rem) {
            MPI_Count r = bmpi_dt_elements(T, rem);
            if (r < 0)
                return -1;
            n += r;
            rem = 0;
        }
    }
    return n;
}

int bmpi_dt_f90(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out)
{
    struct bmpi_dt_table *t = &dt_table;
    for (int i = 0; i < t->nf90; i++)
        if (t->f90[i].combiner == combiner && t->f90[i].p == p && t->f90[i].r == r) {
            *out = t->f90[i].dt->handle;
            return BMPI_OK;
        }
    struct dt_f90 *f = realloc(t->f90, (size_t)(t->nf90 + 1) * sizeof *f);
    if (!f)
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for a Fortran 90 datatype");
    t->f90 = f;
    struct bmpi_datatype *inner = bmpi_dt_get(base), *dt;
    int ints[2] = {p, r}, rc;
    bmpi_dt_retain(inner);
    if (combiner == MPI_COMBINER_F90_INTEGER)
        rc = bmpi_dt_create(combiner, 1, &r, 0, NULL, 0, NULL, inner, &dt);
    else
        rc = bmpi_dt_create(combiner, 2, ints, 0, NULL, 0, NULL, inner, &dt);
    if (rc)
        return rc;
    if ((rc = bmpi_dt_commit(dt))) {
        bmpi_dt_release(dt);
        return rc;
    }
    if ((rc = bmpi_dt_register(dt, out)))
        return rc;
    dt->flags |= BMPI_DT_NOFREE;
    f[t->nf90++] = (struct dt_f90){combiner, p, r, dt};
    return BMPI_OK;
}

MPI_Count bmpi_dt_elements_bytes(const struct bmpi_datatype *dt, MPI_Count n)
{
    if (n == 0 || dt->nelem == 0)
        return 0;
    MPI_Count full = n / dt->nelem, rem = n % dt->nelem;
    MPI_Count bytes;
    if (__builtin_mul_overflow(full, dt->size, &bytes))
        return -1;
    if (rem == 0)
        return bytes;
    size_t np = bmpi_dt_nparts(dt);
    for (size_t i = 0; i < np && rem > 0; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(dt, i, &p);
        const struct bmpi_datatype *T = p.type;
        if (T->nelem == 0)
            continue;
        MPI_Count reps = p.count * p.bl, pel = reps * T->nelem;
        if (rem >= pel) {
            bytes += reps * T->size;
            rem -= pel;
            continue;
        }
        bytes += rem / T->nelem * T->size;
        rem %= T->nelem;
        if (rem)
            bytes += bmpi_dt_elements_bytes(T, rem);
        rem = 0;
    }
    return bytes;
}

MPI_Datatype bmpi_dt_match_size(int typeclass, int size)
{
    static const struct { int tc, size; MPI_Datatype h; } match[] = {
#ifdef MPI_REAL4
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},
        {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
#endif
        /* C names: used where mpi.h lacks the Fortran ones */
        {MPI_TYPECLASS_REAL, 4, MPI_FLOAT},
        {MPI_TYPECLASS_REAL, 8, MPI_DOUBLE},
        {MPI_TYPECLASS_REAL, 16, MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_INTEGER, 1, MPI_SIGNED_CHAR},
        {MPI_TYPECLASS_INTEGER, 2, MPI_SHORT},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INT},
        {MPI_TYPECLASS_INTEGER, 8, MPI_LONG_LONG_INT},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_C_FLOAT_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_C_DOUBLE_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_C_LONG_DOUBLE_COMPLEX},
    };
    for (size_t i = 0; i < sizeof match / sizeof match[0]; i++)
        if (match[i].tc == typeclass && match[i].size == size && match[i].h != MPI_DATATYPE_NULL)
            return match[i].h;
    return MPI_DATATYPE_NULL;
}
