/*
 * Data representations (MPI 4.1 section 14.5): "native", "internal",
 * "external32", and those the program adds with MPI_Register_datarep.
 *
 * An access's data are converted here in whole, before a write and after
 * a read, between the user's buffer and a packed buffer of their file
 * representation; the rest of the I/O layer moves that buffer as bytes.
 * A basic type may take another size in the file (external32's MPI_LONG
 * and MPI_UNSIGNED_LONG: 4 bytes, 8 in memory; MPI_WCHAR: 2 against 4; a
 * registered representation's extent function): the view then maps the
 * stream through the file layouts of its etype and filetype
 * (bmpi_datarep_layout, runtime/dt_repr.c), an access's stream length is
 * its size in the file (bmpi_datarep_size), and its status counts memory
 * bytes (bmpi_datarep_memory_bytes). Long double is 16 bytes in both (x87
 * in memory, IEEE binary128 in the file) and is converted.
 *
 * A registered representation gives the file size of each basic type with
 * its extent function; its conversion functions are called as the
 * standard describes (the user's buffer and datatype, a count of basic
 * data items, a contiguous file buffer, the position of the first item in
 * the tiled datatype, extra_state), in chunks of whole elements of the
 * datatype. MPI_CONVERSION_FN_NULL copies the data unconverted.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "runtime/api.h"

/* Bytes of file data one call of a registered conversion function
 * converts (at least one element of the datatype). */
#define BMPI_DATAREP_CHUNK ((size_t)1 << 20)

enum bmpi_datarep_kind {
    BMPI_DATAREP_NATIVE,     /* "native", "internal" */
    BMPI_DATAREP_EXTERNAL32,
    BMPI_DATAREP_USER,       /* MPI_Register_datarep */
};

struct bmpi_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    enum bmpi_datarep_kind kind;
    /* registered: the int-count functions, or the MPI_Count ones of
     * MPI_Register_datarep_c; NULL read/write: copy unconverted */
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
    struct bmpi_datarep *next;
};

/* "internal" is the implementation's own choice of representation (MPI
 * 4.1 section 14.5.2); here it is the same as "native": data are stored as
 * they are in memory, so files in "internal" are only portable between
 * machines of the same architecture. */
static const struct bmpi_datarep builtin_reps[] = {
    {.name = "native", .kind = BMPI_DATAREP_NATIVE},
    {.name = "internal", .kind = BMPI_DATAREP_NATIVE},
    {.name = "external32", .kind = BMPI_DATAREP_EXTERNAL32},
};

/* Representations registered by the program; they live until
 * MPI_Finalize (the standard has no way to unregister one). */
struct bmpi_datarep_registry {
    struct bmpi_datarep *head;
};

static struct bmpi_datarep_registry registry;

/* --- lookup ------------------------------------------------------------------ */

static const struct bmpi_datarep *lookup(const char *name)
{
    for (size_t i = 0; i < sizeof(builtin_reps) / sizeof(builtin_reps[0]); i++)
        if (!strcmp(builtin_reps[i].name, name))
            return &builtin_reps[i];
    for (const struct bmpi_datarep *r = registry.head; r; r = r->next)
        if (!strcmp(r->name, name))
            return r;
    return NULL;
}

const struct bmpi_datarep *bmpi_datarep_find(const char *datarep)
{
    const struct bmpi_datarep *rep = lookup(datarep);
    if (!rep)
        bmpi_err_set(MPI_ERR_UNSUPPORTED_DATAREP,
                     "unknown data representation \"%.*s\" (native, internal, external32 or one "
                     "registered with MPI_Register_datarep)",
                     MPI_MAX_DATAREP_STRING, datarep);
    return rep;
}

const char *bmpi_datarep_name(const struct bmpi_datarep *rep) { return rep->name; }

bool bmpi_datarep_is_native(const struct bmpi_datarep *rep) { return rep->kind == BMPI_DATAREP_NATIVE; }

/* --- sizes in the file --------------------------------------------------------- */

/* The file size of one predefined basic type under rep (a
 * bmpi_dt_basic_size_fn: ctx is rep). */
static int basic_file_size(const struct bmpi_datatype *basic, void *ctx, MPI_Count *size)
{
    const struct bmpi_datarep *rep = ctx;
    switch (rep->kind) {
    case BMPI_DATAREP_NATIVE:
        *size = bmpi_dt_size(basic);
        return BMPI_OK;
    case BMPI_DATAREP_EXTERNAL32:
        return bmpi_dt_external_size(basic, size);
    case BMPI_DATAREP_USER: {
        MPI_Aint extent;
        int rc = rep->extent_fn(basic->handle, &extent, rep->extra_state);
        if (rc != MPI_SUCCESS)
            return bmpi_err_set(MPI_ERR_CONVERSION,
                                "the extent function of data representation \"%s\" returned %d for %s",
                                rep->name, rc, bmpi_dt_name(basic->handle));
        if (extent < 0)
            return bmpi_err_set(MPI_ERR_CONVERSION,
                                "the extent function of data representation \"%s\" gave %s %ld bytes",
                                rep->name, bmpi_dt_name(basic->handle), (long)extent);
        *size = extent;
        return BMPI_OK;
    }
    }
    return BMPI_OK;
}

static int differs(const struct bmpi_datatype *basic, void *ctx)
{
    MPI_Count fsize;
    int rc = basic_file_size(basic, ctx, &fsize);
    return rc ? rc : fsize != (MPI_Count)bmpi_dt_size(basic) ? -1 : 0;
}

/* Whether some basic type of dt takes another size in rep's files than
 * in memory (*yes); an extent function's failure is an error. */
static int sizes_change(const struct bmpi_datarep *rep, const struct bmpi_datatype *dt, bool *yes)
{
    *yes = false;
    if (rep->kind == BMPI_DATAREP_NATIVE)
        return BMPI_OK;
    int rc = bmpi_dt_for_each_basic(dt, differs, (void *)rep);
    *yes = rc == -1;
    return rc == -1 ? BMPI_OK : rc;
}

int bmpi_datarep_layout(const struct bmpi_datarep *rep, struct bmpi_datatype *dt, struct bmpi_datatype **layout)
{
    bool change;
    int rc = sizes_change(rep, dt, &change);
    *layout = NULL;
    if (rc || !change)
        return rc;
    return bmpi_dt_relayout(dt, basic_file_size, (void *)rep, layout);
}

int bmpi_datarep_size(const struct bmpi_datarep *rep, const struct bmpi_datatype *dt, size_t count, size_t *bytes)
{
    MPI_Count one;
    int rc = bmpi_dt_size_in(dt, basic_file_size, (void *)rep, &one);
    if (rc)
        return rc;
    if (__builtin_mul_overflow((size_t)one, count, bytes) || *bytes > (size_t)INT64_MAX)
        return bmpi_err_set(MPI_ERR_COUNT, "%zu elements of %s take more than 2^63 bytes in data representation "
                            "\"%s\"", count, bmpi_dt_name(dt->handle), rep->name);
    return BMPI_OK;
}

int bmpi_datarep_extent(const struct bmpi_datarep *rep, MPI_Datatype datatype, MPI_Aint *extent)
{
    struct bmpi_datatype *dt = bmpi_dt_get(datatype), *layout;
    if (!dt)
        return bmpi_err_set(MPI_ERR_TYPE, "invalid datatype 0x%x", (unsigned)datatype);
    /* a predefined type takes its size in the file; a derived one the
     * extent of its layout there (its memory extent when no size changes) */
    if (rep->kind != BMPI_DATAREP_NATIVE && dt->defn == MPI_COMBINER_NAMED) {
        MPI_Count size;
        int rc = bmpi_dt_size_in(dt, basic_file_size, (void *)rep, &size);
        *extent = (MPI_Aint)size;
        return rc;
    }
    int rc = bmpi_datarep_layout(rep, dt, &layout);
    if (rc)
        return rc;
    *extent = bmpi_dt_extent(layout ? layout : dt);
    if (layout)
        bmpi_dt_release(layout);
    return BMPI_OK;
}

size_t bmpi_datarep_memory_bytes(const struct bmpi_io_access *a, size_t done)
{
    size_t mem_one = bmpi_dt_size(a->dt);
    if (done == a->bytes || !a->count)
        return a->count * mem_one;
    size_t file_one = a->bytes / a->count;
    if (file_one == mem_one)
        return done;
    MPI_Count cut = 0; /* the items of the element the read stopped in */
    if (done % file_one)
        bmpi_dt_prefix_in(a->dt, basic_file_size, (void *)a->rep, (MPI_Count)(done % file_one), &cut);
    return done / file_one * mem_one + (size_t)cut;
}

/* --- conversion of an access's data ----------------------------------------------- */

/* One call of a registered conversion function: count basic items at item
 * position `position` of the tiled datatype, to or from filebuf. */
static int user_convert(const struct bmpi_datarep *rep, bool to_file, const struct bmpi_io_access *a,
                        MPI_Count count, void *filebuf, MPI_Offset position)
{
    int rc;
    if (to_file && rep->write_fn_c)
        rc = rep->write_fn_c(a->buf, a->type, count, filebuf, position, rep->extra_state);
    else if (!to_file && rep->read_fn_c)
        rc = rep->read_fn_c(a->buf, a->type, count, filebuf, position, rep->extra_state);
    else
        rc = (to_file ? rep->write_fn : rep->read_fn)(a->buf, a->type, (int)count, filebuf, position,
                                                         rep->extra_state);
    if (rc != MPI_SUCCESS)
        return bmpi_err_set(MPI_ERR_CONVERSION, "the %s conversion function of data representation "
                            "\"%s\" returned %d", to_file ? "write" : "read", rep->name, rc);
    return BMPI_OK;
}

static bool user_has_fn(const struct bmpi_datarep *rep, bool to_file)
{
    return to_file ? rep->write_fn || rep->write_fn_c : rep->read_fn || rep->read_fn_c;
}

/* Elements of the datatype per call: about BMPI_DATAREP_CHUNK bytes of
 * file data, at least one, and a count of items an int holds for the
 * int-count functions. */
static size_t user_chunk_elements(const struct bmpi_datarep *rep, const struct bmpi_io_access *a)
{
    const struct bmpi_datatype *dt = a->dt;
    size_t one = bmpi_io_access_element(a), k = one ? BMPI_DATAREP_CHUNK / one : 1;
    if (k == 0)
        k = 1;
    bool int_count = !rep->read_fn_c && !rep->write_fn_c;
    if (int_count && dt->nelem > 0 && k > (size_t)(INT_MAX / dt->nelem))
        k = (size_t)(INT_MAX / dt->nelem);
    return k;
}

/* `elements` whole elements of the access between its buffer and the
 * packed file data at file (registered representations). */
static int user_convert_elements(const struct bmpi_datarep *rep, bool to_file, const struct bmpi_io_access *a,
                                 unsigned char *file, size_t elements)
{
    const struct bmpi_datatype *dt = a->dt;
    if (elements > 0 && !rep->read_fn_c && !rep->write_fn_c && dt->nelem > INT_MAX)
        return bmpi_err_set(MPI_ERR_CONVERSION, "one element of %s has %lld basic items, more than the "
                            "int count of data representation \"%s\"'s conversion functions",
                            bmpi_dt_name(a->type), (long long)dt->nelem, rep->name);
    size_t step = user_chunk_elements(rep, a), size = bmpi_io_access_element(a);
    for (size_t i = 0; i < elements; i += step) {
        size_t k = elements - i < step ? elements - i : step;
        int rc = user_convert(rep, to_file, a, (MPI_Count)k * dt->nelem, file + i * size,
                              (MPI_Offset)i * dt->nelem);
        if (rc)
            return rc;
    }
    return BMPI_OK;
}

/* A registered representation without a conversion function for this
 * direction (MPI_CONVERSION_FN_NULL) copies the data as they are, which
 * only works when its extent function gives the memory sizes. */
static int check_copyable(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, bool to_file)
{
    size_t in_file = bmpi_io_access_element(a), in_memory = bmpi_dt_size(a->dt);
    if (rep->kind != BMPI_DATAREP_USER || user_has_fn(rep, to_file) || in_file == in_memory)
        return BMPI_OK;
    return bmpi_err_set(MPI_ERR_CONVERSION, "data representation \"%s\" has no %s conversion function "
                        "(MPI_CONVERSION_FN_NULL) but its extent function gives %s %zu bytes, not its %zu in "
                        "memory", rep->name, to_file ? "write" : "read", bmpi_dt_name(a->type), in_file, in_memory);
}

int bmpi_datarep_to_file(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, void **out)
{
    int rc = check_copyable(rep, a, true);
    if (rc)
        return rc;
    unsigned char *file = malloc(a->bytes ? a->bytes : 1);
    if (!file)
        return bmpi_err_set(MPI_ERR_NO_MEM, "no memory for %zu bytes of converted data", a->bytes);
    if (rep->kind == BMPI_DATAREP_EXTERNAL32) {
        MPI_Count pos = 0;
        rc = bmpi_dt_pack_external(a->buf, a->count, a->dt, file, (MPI_Count)a->bytes, &pos);
    } else if (rep->kind == BMPI_DATAREP_USER && user_has_fn(rep, true)) {
        rc = user_convert_elements(rep, true, a, file, a->count);
    } else {
        bmpi_dt_pack_all(a->buf, a->count, a->dt, file);
    }
    if (rc) {
        free(file);
        return rc;
    }
    *out = file;
    return BMPI_OK;
}

/* `elements` whole elements from file representation at src into buf,
 * laid out as the access's buffer (its datatype, from element 0). */
static int from_file_elements(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, void *buf,
                              const unsigned char *src, size_t elements)
{
    if (rep->kind == BMPI_DATAREP_EXTERNAL32) {
        MPI_Count pos = 0;
        return bmpi_dt_unpack_external(src, (MPI_Count)(elements * bmpi_io_access_element(a)), &pos, buf, elements,
                                       a->dt);
    }
    struct bmpi_io_access one = *a;
    one.buf = buf;
    return user_convert_elements(rep, false, &one, (unsigned char *)src, elements);
}

/* A read that stopped inside an element (end of file): convert that
 * element, zero-padded, into scratch memory and unpack into the user's
 * buffer only the basic items whose file bytes were all read. */
static int from_file_tail(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, size_t whole,
                          const unsigned char *src, size_t rem)
{
    const struct bmpi_datatype *dt = a->dt;
    size_t size = bmpi_dt_size(dt), span = (size_t)bmpi_dt_true_extent(dt), in_file = bmpi_io_access_element(a);
    unsigned char *padded = calloc(1, in_file), *scratch = malloc(span ? span : 1), *native = malloc(size);
    MPI_Count keep = (MPI_Count)rem; /* memory bytes of the items read whole */
    int rc = BMPI_OK;
    if (!padded || !scratch || !native) {
        rc = bmpi_err_set(MPI_ERR_NO_MEM, "no memory to convert the last element of a read");
        goto out;
    }
    memcpy(padded, src, rem);
    void *base = scratch - bmpi_dt_true_lb(dt);
    if ((rc = from_file_elements(rep, a, base, padded, 1)))
        goto out;
    if (in_file != size && (rc = bmpi_dt_prefix_in(dt, basic_file_size, (void *)rep, keep, &keep)))
        goto out;
    bmpi_dt_pack_all(base, 1, dt, native);
    struct bmpi_dt_cursor c;
    bmpi_dt_cursor_init(&c, a->buf, a->count, dt);
    bmpi_dt_cursor_seek(&c, whole * size);
    bmpi_dt_unpack(&c, native, (size_t)keep);
out:
    free(padded);
    free(scratch);
    free(native);
    return rc;
}

int bmpi_datarep_from_file(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, const void *src,
                           size_t bytes)
{
    int rc = check_copyable(rep, a, false);
    if (rc || bytes == 0)
        return rc;
    if (rep->kind == BMPI_DATAREP_NATIVE || (rep->kind == BMPI_DATAREP_USER && !user_has_fn(rep, false))) {
        struct bmpi_dt_cursor c;
        bmpi_dt_cursor_init(&c, a->buf, a->count, a->dt);
        bmpi_dt_unpack(&c, src, bytes);
        return BMPI_OK;
    }
    size_t one = bmpi_io_access_element(a), whole = bytes / one, rem = bytes % one;
    if ((rc = from_file_elements(rep, a, a->buf, src, whole)))
        return rc;
    return rem ? from_file_tail(rep, a, whole, (const unsigned char *)src + whole * one, rem) : BMPI_OK;
}

void bmpi_datarep_finalize(void)
{
    while (registry.head) {
        struct bmpi_datarep *r = registry.head;
        registry.head = r->next;
        free(r);
    }
}

/* --- MPI_Register_datarep ------------------------------------------------------------ */

static int register_datarep(const char *fn, const char *datarep, struct bmpi_datarep *proto)
{
    if (!datarep)
        return bmpi_err_file_obj(NULL, MPI_ERR_ARG, fn, "datarep is NULL");
    size_t len = strnlen(datarep, MPI_MAX_DATAREP_STRING);
    if (len == 0 || len >= MPI_MAX_DATAREP_STRING)
        return bmpi_err_file_obj(NULL, MPI_ERR_ARG, fn, "datarep is %s (1 to %d characters)",
                                 len ? "too long" : "empty", MPI_MAX_DATAREP_STRING - 1);
    if (!proto->extent_fn)
        return bmpi_err_file_obj(NULL, MPI_ERR_ARG, fn, "dtype_file_extent_fn is NULL");
    if (lookup(datarep))
        return bmpi_err_file_obj(NULL, MPI_ERR_DUP_DATAREP, fn,
                                 "data representation \"%s\" is already defined", datarep);
    struct bmpi_datarep *rep = malloc(sizeof(*rep));
    if (!rep)
        return bmpi_err_file_obj(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    *rep = *proto;
    memcpy(rep->name, datarep, len + 1);
    rep->kind = BMPI_DATAREP_USER;
    rep->next = registry.head;
    registry.head = rep;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Register_datarep)
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    struct bmpi_datarep proto = {
        .read_fn = read_conversion_fn,
        .write_fn = write_conversion_fn,
        .extent_fn = dtype_file_extent_fn,
        .extra_state = extra_state,
    };
    return register_datarep("MPI_Register_datarep", datarep, &proto);
}

BMPI_API(MPI_Register_datarep_c)
int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    struct bmpi_datarep proto = {
        .read_fn_c = read_conversion_fn,
        .write_fn_c = write_conversion_fn,
        .extent_fn = dtype_file_extent_fn,
        .extra_state = extra_state,
    };
    return register_datarep("MPI_Register_datarep_c", datarep, &proto);
}
