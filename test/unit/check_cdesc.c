/*
 * Unit tests of fortran/cdesc.c: mpi_f08 choice buffers (Fortran 2018
 * descriptors, built here with libgfortran's CFI_establish/CFI_section as
 * gfortran builds them) as buffer, count and datatype. Each datatype is
 * checked by packing with MPI_Pack and comparing the bytes with a
 * reference that visits the section's elements in array element order
 * through CFI_address. Each test runs in its own process with an
 * initialised singleton and MPI_ERRORS_RETURN.
 */
#include <check.h>
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include <ISO_Fortran_binding.h>
#include <mpi.h>

#include "fortran/cdesc.h"
#include "test/unit/run_suite.h"

#define OK(call) ck_assert_int_eq((call), MPI_SUCCESS)

static void setup(void)
{
    OK(MPI_Init(NULL, NULL));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

static void teardown(void) { MPI_Finalize(); }

typedef CFI_CDESC_T(CFI_MAX_RANK) desc_t;

static CFI_cdesc_t *array(desc_t *d, void *base, CFI_type_t type, int rank, const CFI_index_t *extents)
{
    CFI_cdesc_t *c = (CFI_cdesc_t *)d;
    ck_assert_int_eq(CFI_establish(c, base, CFI_attribute_other, type, 0, (CFI_rank_t)rank, extents),
                     CFI_SUCCESS);
    return c;
}

/* src(lb:ub:stride) per dimension, as a Fortran pointer to the section */
static CFI_cdesc_t *section(desc_t *d, const CFI_cdesc_t *src, const CFI_index_t *lb, const CFI_index_t *ub,
                            const CFI_index_t *stride)
{
    CFI_cdesc_t *c = (CFI_cdesc_t *)d;
    ck_assert_int_eq(CFI_establish(c, NULL, CFI_attribute_pointer, src->type, src->elem_len, src->rank, NULL),
                     CFI_SUCCESS);
    ck_assert_int_eq(CFI_section(c, src, lb, ub, stride), CFI_SUCCESS);
    return c;
}

/* a(first:n-1:stride) of a rank-1 array a of n elements */
static CFI_cdesc_t *every_nth(desc_t *d, desc_t *s, void *a, CFI_type_t type, CFI_index_t n, CFI_index_t first,
                              CFI_index_t stride)
{
    CFI_index_t ext[1] = {n}, lb[1] = {first}, ub[1] = {n - 1}, st[1] = {stride};
    return section(s, array(d, a, type, 1, ext), lb, ub, st);
}

/* The section's bytes, element after element, dimension 0 fastest. */
static size_t reference(const CFI_cdesc_t *d, unsigned char *out)
{
    CFI_index_t idx[CFI_MAX_RANK];
    size_t n = 1, len = 0;
    for (int i = 0; i < d->rank; i++) {
        idx[i] = d->dim[i].lower_bound;
        n *= (size_t)d->dim[i].extent;
    }
    for (size_t k = 0; k < n; k++) {
        memcpy(out + len, CFI_address(d, idx), d->elem_len);
        len += d->elem_len;
        for (int i = 0; i < d->rank && ++idx[i] == d->dim[i].lower_bound + d->dim[i].extent; i++)
            idx[i] = d->dim[i].lower_bound;
    }
    return len;
}

/* count elements of type from d: a new datatype that packs as the first
 * count elements of the reference */
static void check_section(const CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type)
{
    static unsigned char want[1 << 16], got[1 << 16];
    size_t all = reference(d, want);
    int tsize;
    OK(MPI_Type_size(type, &tsize));
    ck_assert_uint_le((size_t)count * (size_t)tsize, all);
    struct bmpi_f08_buffer b;
    OK(bmpi_f08_buffer_from_cdesc(d, count, type, &b));
    ck_assert_ptr_eq(b.buf, d->base_addr);
    int psize, pos = 0;
    OK(MPI_Pack_size((int)b.count, b.type, MPI_COMM_WORLD, &psize));
    ck_assert_int_eq(psize, (int)count * tsize);
    OK(MPI_Pack(b.buf, (int)b.count, b.type, got, (int)sizeof(got), &pos, MPI_COMM_WORLD));
    ck_assert_int_eq(pos, (int)count * tsize);
    ck_assert_int_eq(memcmp(got, want, (size_t)pos), 0);
    bmpi_f08_buffer_release(&b);
    ck_assert_int_eq(b.owns_type, 0);
}

static void fill(void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)p)[i] = (unsigned char)(i * 7 + 1);
}

START_TEST(contiguous_as_is)
{
    double a[12];
    desc_t d, s;
    CFI_index_t ext[2] = {3, 4}, lb[2] = {0, 1}, ub[2] = {2, 2}, st[2] = {1, 1};
    CFI_cdesc_t *c = array(&d, a, CFI_type_double, 2, ext);
    struct bmpi_f08_buffer b;
    OK(bmpi_f08_buffer_from_cdesc(c, 12, MPI_DOUBLE, &b));
    ck_assert(b.buf == a && b.count == 12 && b.type == MPI_DOUBLE && !b.owns_type);
    /* whole columns 2:3 are contiguous too */
    CFI_cdesc_t *sec = section(&s, c, lb, ub, st);
    OK(bmpi_f08_buffer_from_cdesc(sec, 6, MPI_DOUBLE, &b));
    ck_assert(b.buf == a + 3 && b.count == 6 && b.type == MPI_DOUBLE && !b.owns_type);
    /* a scalar (rank 0) */
    double x;
    CFI_cdesc_t *sc = array(&d, &x, CFI_type_double, 0, NULL);
    OK(bmpi_f08_buffer_from_cdesc(sc, 1, MPI_DOUBLE, &b));
    ck_assert(b.buf == &x && b.count == 1 && !b.owns_type);
}
END_TEST

START_TEST(strided_1d)
{
    double a[20];
    fill(a, sizeof(a));
    desc_t d, s;
    CFI_cdesc_t *sec = every_nth(&d, &s, a, CFI_type_double, 20, 1, 3);
    check_section(sec, 7, MPI_DOUBLE);
    check_section(sec, 4, MPI_DOUBLE); /* fewer than the section holds */
    check_section(sec, 1, MPI_DOUBLE);
}
END_TEST

START_TEST(strided_3d_partial)
{
    int a[5 * 6 * 4];
    fill(a, sizeof(a));
    desc_t d, s;
    CFI_index_t ext[3] = {5, 6, 4}, lb[3] = {0, 1, 0}, ub[3] = {4, 5, 3}, st[3] = {2, 2, 1};
    CFI_cdesc_t *sec = section(&s, array(&d, a, CFI_type_int, 3, ext), lb, ub, st);
    /* 3 x 3 x 4 elements: all of them, then counts that end inside a row
     * and inside a plane */
    for (MPI_Count n = 1; n <= 36; n++)
        check_section(sec, n, MPI_INT);
}
END_TEST

START_TEST(negative_stride)
{
    float a[4 * 3];
    fill(a, sizeof(a));
    desc_t d, s;
    CFI_index_t ext[2] = {4, 3}, lb[2] = {3, 2}, ub[2] = {0, 0}, st[2] = {-1, -2};
    CFI_cdesc_t *sec = section(&s, array(&d, a, CFI_type_float, 2, ext), lb, ub, st);
    check_section(sec, 8, MPI_FLOAT);
    check_section(sec, 5, MPI_FLOAT);
}
END_TEST

/* a COMPLEX section sent as REALs: two MPI elements per array element */
START_TEST(several_per_element)
{
    float complex a[10];
    fill(a, sizeof(a));
    desc_t d, s;
    CFI_cdesc_t *sec = every_nth(&d, &s, a, CFI_type_float_Complex, 10, 0, 2);
    check_section(sec, 10, MPI_FLOAT);
    check_section(sec, 7, MPI_FLOAT); /* ends inside an element */
    check_section(sec, 5, MPI_COMPLEX);
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_FLOAT, &pair));
    OK(MPI_Type_commit(&pair));
    check_section(sec, 3, pair);
    OK(MPI_Type_free(&pair));
}
END_TEST

START_TEST(empty_section)
{
    double a[4];
    desc_t d, s;
    CFI_cdesc_t *sec = every_nth(&d, &s, a, CFI_type_double, 4, 0, 2);
    /* a(3:2:2) as gfortran passes it (libgfortran's CFI_section rounds
     * that extent up to 1) */
    sec->dim[0].extent = 0;
    struct bmpi_f08_buffer b;
    OK(bmpi_f08_buffer_from_cdesc(sec, 0, MPI_DOUBLE, &b));
    ck_assert(b.count == 0 && b.type == MPI_DOUBLE && !b.owns_type);
}
END_TEST

START_TEST(errors)
{
    int a[10];
    desc_t d, s;
    CFI_cdesc_t *sec = every_nth(&d, &s, a, CFI_type_int, 10, 0, 2);
    struct bmpi_f08_buffer b;
    /* more than the section holds */
    ck_assert_int_eq(bmpi_f08_buffer_from_cdesc(sec, 6, MPI_INT, &b), MPI_ERR_COUNT);
    /* an MPI element that spans array elements of a strided section */
    ck_assert_int_eq(bmpi_f08_buffer_from_cdesc(sec, 1, MPI_DOUBLE, &b), MPI_ERR_TYPE);
    /* a bad datatype is left to the C call, which reports it as in C */
    OK(bmpi_f08_buffer_from_cdesc(sec, 2, MPI_DATATYPE_NULL, &b));
    ck_assert(b.type == MPI_DATATYPE_NULL && b.count == 2 && !b.owns_type);
    int pos = 0;
    char buf[16];
    ck_assert_int_eq(MPI_Pack(b.buf, (int)b.count, b.type, buf, sizeof(buf), &pos, MPI_COMM_WORLD),
                     MPI_ERR_TYPE);
}
END_TEST

/* A pending receive keeps the section's datatype past its release. */
START_TEST(release_while_pending)
{
    int a[8] = {0}, src[4] = {1, 2, 3, 4};
    desc_t d, s;
    CFI_cdesc_t *sec = every_nth(&d, &s, a, CFI_type_int, 8, 1, 2);
    struct bmpi_f08_buffer b;
    OK(bmpi_f08_buffer_from_cdesc(sec, 4, MPI_INT, &b));
    ck_assert(b.owns_type);
    MPI_Request r;
    OK(MPI_Irecv(b.buf, (int)b.count, b.type, 0, 5, MPI_COMM_SELF, &r));
    bmpi_f08_buffer_release(&b);
    OK(MPI_Send(src, 4, MPI_INT, 0, 5, MPI_COMM_SELF));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int want[8] = {0, 1, 0, 2, 0, 3, 0, 4};
    ck_assert_int_eq(memcmp(a, want, sizeof(a)), 0);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {contiguous_as_is, strided_1d,    strided_3d_partial,
                                         negative_stride,  several_per_element, empty_section,
                                         errors,           release_while_pending};
    return run_suite("cdesc", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
