/*
 * Compiling a datatype's type map into nodes (see datatype.h): the
 * representation the cursor in dt_pack.c walks.
 *
 * Each part of a type (datatype_impl.h) is emitted into a builder as
 * "count repetitions, stride apart, of a block of bl instances of the
 * child type". Emission merges as it goes, so that the common shapes end up
 * as tight loops:
 *   - a contiguous child becomes a plain block; adjacent blocks join;
 *   - equally spaced equal blocks become one vector segment;
 *   - a vector repeated with a stride that continues its own becomes one
 *     longer vector (contiguous of vectors, subarray rows);
 *   - a small child used once, or a few times, is inlined.
 * Anything else references the child's node (shared, reference counted),
 * so memory stays proportional to the constructors' arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/datatype_impl.h"
#include "runtime/error.h"

/* A child with at most this many segments is copied into its parent rather
 * than referenced when used once (or count times, if count * nsegs is
 * still within the limit). */
#define DT_INLINE_MAX 16
#define DT_UNROLL_BYTES 256

struct builder {
    struct bmpi_dt_seg *segs;
    size_t n, cap;
};

static int push(struct builder *b, const struct bmpi_dt_seg *s)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        struct bmpi_dt_seg *segs = realloc(b->segs, cap * sizeof *segs);
        if (!segs)
            return bmpi_err_set(MPI_ERR_NO_MEM, "no memory to commit a datatype (%zu segments)",
                                cap);
        b->segs = segs;
        b->cap = cap;
    }
    b->segs[b->n++] = *s;
    if (s->child)
        s->child->refs++;
    return BMPI_OK;
}

static int emit_leaf(struct builder *b, MPI_Aint disp, size_t count, MPI_Aint stride, size_t blen)
{
    if (count == 0 || blen == 0)
        return BMPI_OK;
    if (count > 1 && stride == (MPI_Aint)blen) {
        blen *= count;
        count = 1;
    }
    if (count == 1)
        stride = 0;
    if (b->n > 0) {
        struct bmpi_dt_seg *l = &b->segs[b->n - 1];
        if (!l->child && count == 1) {
            if (l->count == 1 && l->disp + (MPI_Aint)l->blen == disp) {
                l->blen += blen; /* adjacent blocks */
                return BMPI_OK;
            }
            if (l->blen == blen) {
                MPI_Aint next;
                if (l->count == 1) { /* two equal blocks: a vector */
                    l->stride = disp - l->disp;
                    l->count = 2;
                    return BMPI_OK;
                }
                if (!__builtin_mul_overflow((MPI_Aint)l->count, l->stride, &next) &&
                    !__builtin_add_overflow(next, l->disp, &next) && next == disp) {
                    l->count++; /* continues the vector */
                    return BMPI_OK;
                }
            }
        }
    }
    struct bmpi_dt_seg s = {.disp = disp, .stride = stride, .count = count, .blen = blen};
    return push(b, &s);
}

static int emit_child(struct builder *b, MPI_Aint disp, size_t count, MPI_Aint stride,
                      struct bmpi_dt_node *n);

/* Re-emit segment s of a child placed at d. */
static int emit_seg(struct builder *b, const struct bmpi_dt_seg *s, MPI_Aint d)
{
    if (s->child)
        return emit_child(b, d + s->disp, s->count, s->stride, s->child);
    return emit_leaf(b, d + s->disp, s->count, s->stride, s->blen);
}

static int emit_child(struct builder *b, MPI_Aint disp, size_t count, MPI_Aint stride,
                      struct bmpi_dt_node *n)
{
    int rc;
    if (count == 0 || n->size == 0)
        return BMPI_OK;
    if (count == 1)
        stride = 0;
    if (n->nsegs == 1) {
        const struct bmpi_dt_seg *s = &n->segs[0];
        MPI_Aint span;
        if (count == 1)
            return emit_seg(b, s, disp);
        if (s->count == 1) {
            if (s->child)
                return emit_child(b, disp + s->disp, count, stride, s->child);
            return emit_leaf(b, disp + s->disp, count, stride, s->blen);
        }
        if (!__builtin_mul_overflow((MPI_Aint)s->count, s->stride, &span) && span == stride) {
            /* the repetitions continue the child's vector */
            if (s->child)
                return emit_child(b, disp + s->disp, count * s->count, s->stride, s->child);
            return emit_leaf(b, disp + s->disp, count * s->count, s->stride, s->blen);
        }
    }
    /* inline when used once, or unroll a few repetitions of a small child
     * (for large children the loop costs nothing and saves memory) */
    if (count <= DT_INLINE_MAX && n->nsegs <= DT_INLINE_MAX / count &&
        (count == 1 || n->size * count <= DT_UNROLL_BYTES)) {
        for (size_t r = 0; r < count; r++)
            for (size_t i = 0; i < n->nsegs; i++)
                if ((rc = emit_seg(b, &n->segs[i], disp + (MPI_Aint)r * stride)))
                    return rc;
        return BMPI_OK;
    }
    struct bmpi_dt_seg s = {
        .disp = disp, .stride = stride, .count = count, .blen = n->size, .child = n};
    return push(b, &s);
}

/* Turn the builder into a node (taking its segments); NULL on failure. */
static int finish(struct builder *b, struct bmpi_dt_node **out)
{
    /* one reference to a child at offset 0: that is the child */
    if (b->n == 1 && b->segs[0].child && b->segs[0].count == 1 && b->segs[0].disp == 0) {
        *out = b->segs[0].child; /* the builder's reference passes on */
        free(b->segs);
        return BMPI_OK;
    }
    struct bmpi_dt_node *n = malloc(sizeof *n + b->n * sizeof n->segs[0]);
    if (!n) {
        for (size_t i = 0; i < b->n; i++)
            if (b->segs[i].child)
                bmpi_dt_node_release(b->segs[i].child);
        free(b->segs);
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory to commit a datatype");
    }
    n->refs = 1;
    n->depth = 1;
    n->size = 0;
    n->nsegs = b->n;
    for (size_t i = 0; i < b->n; i++) {
        struct bmpi_dt_seg *s = &n->segs[i];
        *s = b->segs[i];
        s->before = n->size;
        n->size += s->count * s->blen;
        if (s->child && s->child->depth + 1 > n->depth)
            n->depth = s->child->depth + 1;
    }
    free(b->segs);
    *out = n;
    return BMPI_OK;
}

void bmpi_dt_node_release(struct bmpi_dt_node *n)
{
    if (--n->refs > 0)
        return;
    for (size_t i = 0; i < n->nsegs; i++)
        if (n->segs[i].child)
            bmpi_dt_node_release(n->segs[i].child);
    free(n);
}

/* Emit one part: count repetitions (stride apart) of bl consecutive
 * instances of T. */
static int emit_part(struct builder *b, const struct bmpi_dt_part *p)
{
    const struct bmpi_datatype *T = p->type;
    if (p->count == 0 || p->bl == 0 || T->size == 0)
        return BMPI_OK;
    if (p->bl == 1)
        return emit_child(b, p->disp, (size_t)p->count, p->stride, T->node);
    struct builder blk = {0};
    struct bmpi_dt_node *block;
    int rc = emit_child(&blk, 0, (size_t)p->bl, T->ub - T->lb, T->node);
    if (!rc)
        rc = finish(&blk, &block);
    else
        free(blk.segs);
    if (rc)
        return rc;
    rc = emit_child(b, p->disp, (size_t)p->count, p->stride, block);
    bmpi_dt_node_release(block);
    return rc;
}

int bmpi_dt_compile(struct bmpi_datatype *dt)
{
    if (dt->node)
        return BMPI_OK;
    size_t np = bmpi_dt_nparts(dt);
    int rc = BMPI_OK;
    for (size_t i = 0; i < np && !rc; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(dt, i, &p);
        rc = bmpi_dt_compile(p.type);
    }
    if (rc)
        return rc;

    struct builder b = {0};
    for (size_t i = 0; i < np && !rc; i++) {
        struct bmpi_dt_part p;
        bmpi_dt_part(dt, i, &p);
        rc = emit_part(&b, &p);
    }
    struct bmpi_dt_node *n;
    if (rc) {
        for (size_t i = 0; i < b.n; i++)
            if (b.segs[i].child)
                bmpi_dt_node_release(b.segs[i].child);
        free(b.segs);
        return rc;
    }
    if ((rc = finish(&b, &n)))
        return rc;
    if (n->depth > BMPI_DT_MAX_DEPTH) {
        int depth = n->depth;
        bmpi_dt_node_release(n);
        return bmpi_err_set(MPI_ERR_TYPE,
                            "datatype nested too deeply: %d levels of non-contiguous nesting "
                            "remain after merging, at most %d are supported",
                            depth, BMPI_DT_MAX_DEPTH);
    }
    dt->node = n;
    if (n->nsegs == 1 && !n->segs[0].child && n->segs[0].count == 1 &&
        (MPI_Aint)n->segs[0].blen == dt->ub - dt->lb)
        dt->flags |= BMPI_DT_CONTIG;
    return BMPI_OK;
}

void bmpi_dt_root_seg(const struct bmpi_datatype *dt, size_t count, struct bmpi_dt_seg *root)
{
    const struct bmpi_dt_node *n = dt->node;
    MPI_Aint ext = dt->ub - dt->lb, span;
    *root = (struct bmpi_dt_seg){
        .disp = 0, .stride = ext, .count = count, .blen = n->size, .child = (struct bmpi_dt_node *)n};
    if (n->nsegs == 1) {
        const struct bmpi_dt_seg *s = &n->segs[0];
        if (count == 1) {
            *root = *s;
        } else if (s->count == 1) {
            *root = (struct bmpi_dt_seg){
                .disp = s->disp, .stride = ext, .count = count, .blen = s->blen, .child = s->child};
        } else if (!__builtin_mul_overflow((MPI_Aint)s->count, s->stride, &span) && span == ext) {
            *root = (struct bmpi_dt_seg){.disp = s->disp,
                                         .stride = s->stride,
                                         .count = count * s->count,
                                         .blen = s->blen,
                                         .child = s->child};
        }
    }
    if (!root->child && root->count > 1 && root->stride == (MPI_Aint)root->blen) {
        root->blen *= root->count;
        root->count = 1;
    }
    root->before = 0;
}
