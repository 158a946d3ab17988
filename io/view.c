/*
 * Views (io/file.h): MPI_File_set_view/get_view/get_type_extent, and the
 * map from a view's stream of data to runs of file bytes.
 *
 * A view tiles the file from its displacement with copies of the
 * filetype; the data of an access is a stretch of the stream those tiles
 * select. The map walks it with the datatype cursor (runtime/datatype.h)
 * laid over a pretend address space: the cursor's address A stands for the
 * file offset disp + (A - MAP_ORIGIN), so the merged contiguous pieces the
 * cursor yields are file runs, in stream order (the standard makes
 * filetypes' displacements non-negative and non-decreasing).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "io/file.h"
#include "runtime/api.h"

/* Any address with room below for nothing and above for any file. */
#define MAP_ORIGIN ((uintptr_t)1 << 20)
#define MAP_IOV_BATCH 64

void bmpi_view_init_default(struct bmpi_file_view *v)
{
    *v = (struct bmpi_file_view){
        .etype = MPI_BYTE,
        .filetype = MPI_BYTE,
        .edt = bmpi_dt_get(MPI_BYTE),
        .fdt = bmpi_dt_get(MPI_BYTE),
        .esize = 1,
        .fsize = 1,
        .fextent = 1,
        .contig = true,
        .rep = bmpi_datarep_find("native"),
    };
}

static void release_type(MPI_Datatype *t)
{
    if (!bmpi_dt_is_predefined(bmpi_dt_get(*t)))
        PMPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

static void release_layouts(struct bmpi_file_view *v)
{
    if (v->elayout)
        bmpi_dt_release(v->elayout);
    if (v->flayout)
        bmpi_dt_release(v->flayout);
    v->elayout = v->flayout = NULL;
}

void bmpi_view_release(struct bmpi_file_view *v)
{
    release_type(&v->etype);
    release_type(&v->filetype);
    release_layouts(v);
}

/* --- the map ---------------------------------------------------------------------- */

void bmpi_io_map_init(struct bmpi_io_map *m, const struct bmpi_file_view *v, MPI_Offset start, size_t bytes)
{
    m->view = v;
    m->left = bytes;
    if (v->contig) {
        m->next_contig = v->disp + start;
        return;
    }
    MPI_Offset tile = start / (MPI_Offset)v->fsize;
    size_t within = (size_t)(start % (MPI_Offset)v->fsize);
    size_t tiles = (within + bytes + v->fsize - 1) / v->fsize;
    m->base = v->disp + tile * v->fextent;
    bmpi_dt_cursor_init(&m->cursor, (void *)MAP_ORIGIN, tiles ? tiles : 1, v->fdt);
    bmpi_dt_cursor_seek(&m->cursor, within);
}

int bmpi_io_map_next_max(struct bmpi_io_map *m, struct bmpi_io_run *runs, int max, size_t max_bytes)
{
    if (!m->left || max < 1 || !max_bytes)
        return 0;
    if (m->view->contig) {
        size_t n = m->left < max_bytes ? m->left : max_bytes;
        runs[0] = (struct bmpi_io_run){m->next_contig, n};
        m->next_contig += (MPI_Offset)n;
        m->left -= n;
        return 1;
    }
    struct iovec iov[MAP_IOV_BATCH];
    int filled = 0;
    while (filled < max && m->left && max_bytes) {
        int want = max - filled < MAP_IOV_BATCH ? max - filled : MAP_IOV_BATCH;
        size_t limit = m->left < max_bytes ? m->left : max_bytes, got = 0;
        int n = bmpi_dt_iov(&m->cursor, iov, want, limit, &got);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++) {
            MPI_Offset off = m->base + (MPI_Offset)((uintptr_t)iov[i].iov_base - MAP_ORIGIN);
            if (filled && runs[filled - 1].off + (MPI_Offset)runs[filled - 1].len == off)
                runs[filled - 1].len += iov[i].iov_len;
            else
                runs[filled++] = (struct bmpi_io_run){off, iov[i].iov_len};
        }
        m->left -= got;
        max_bytes -= got;
    }
    return filled;
}

int bmpi_io_map_next(struct bmpi_io_map *m, struct bmpi_io_run *runs, int max)
{
    return bmpi_io_map_next_max(m, runs, max, SIZE_MAX);
}

MPI_Offset bmpi_io_map_byte(const struct bmpi_file_view *v, MPI_Offset start)
{
    struct bmpi_io_map m;
    struct bmpi_io_run run;
    bmpi_io_map_init(&m, v, start, 1);
    return bmpi_io_map_next(&m, &run, 1) ? run.off : v->disp;
}

void bmpi_io_map_bounds(const struct bmpi_file_view *v, MPI_Offset start, size_t bytes, MPI_Offset *lo,
                        MPI_Offset *hi)
{
    if (!bytes) {
        *lo = *hi = bmpi_io_map_byte(v, start);
        return;
    }
    *lo = bmpi_io_map_byte(v, start);
    *hi = bmpi_io_map_byte(v, start + (MPI_Offset)bytes - 1) + 1;
}

MPI_Offset bmpi_io_map_stream_end(const struct bmpi_file_view *v, MPI_Offset file_size)
{
    if (file_size <= v->disp)
        return 0;
    if (v->contig)
        return file_size - v->disp;
    MPI_Offset tiles = (file_size - v->disp) / v->fextent;
    MPI_Offset stream = tiles * (MPI_Offset)v->fsize;
    /* the data of the tile the end falls in that lie before it */
    struct bmpi_io_map m;
    struct bmpi_io_run runs[MAP_IOV_BATCH];
    bmpi_io_map_init(&m, v, stream, v->fsize);
    int n;
    while ((n = bmpi_io_map_next(&m, runs, MAP_IOV_BATCH)) > 0)
        for (int i = 0; i < n; i++) {
            if (runs[i].off >= file_size)
                return stream;
            MPI_Offset end = runs[i].off + (MPI_Offset)runs[i].len;
            stream += (end <= file_size ? end : file_size) - runs[i].off;
        }
    return stream;
}

/* --- MPI_File_set_view and friends ------------------------------------------------- */

/* A handle of our own for a type the user may free (predefined types
 * need none). */
static int keep_type(MPI_Datatype t, MPI_Datatype *out)
{
    if (bmpi_dt_is_predefined(bmpi_dt_get(t))) {
        *out = t;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(t, out);
}

/* The layouts of the etype and filetype in rep's files (io/file.h). */
static int view_layouts(struct bmpi_file_view *v)
{
    int err = bmpi_datarep_layout(v->rep, v->edt, &v->elayout);
    if (!err)
        err = bmpi_datarep_layout(v->rep, v->fdt, &v->flayout);
    v->edt = v->elayout ? v->elayout : v->edt;
    v->fdt = v->flayout ? v->flayout : v->fdt;
    return err;
}

/* Sizes and extent of the view's layouts, checked. */
static int view_shape(struct bmpi_file_view *v, MPI_Datatype etype, MPI_Datatype filetype)
{
    v->esize = bmpi_dt_size(v->edt);
    v->fsize = bmpi_dt_size(v->fdt);
    if (!v->esize)
        return bmpi_err_set(MPI_ERR_TYPE, "etype %s has no data", bmpi_dt_name(etype));
    if (!v->fsize || v->fsize % v->esize)
        return bmpi_err_set(MPI_ERR_TYPE, "filetype %s holds %zu bytes, not a whole number of etypes of %zu",
                            bmpi_dt_name(filetype), v->fsize, v->esize);
    if (bmpi_dt_true_lb(v->fdt) < 0 || bmpi_dt_lb(v->fdt) < 0)
        return bmpi_err_set(MPI_ERR_TYPE, "filetype %s has a negative displacement", bmpi_dt_name(filetype));
    v->fextent = bmpi_dt_extent(v->fdt);
    if (v->fextent <= 0)
        return bmpi_err_set(MPI_ERR_TYPE, "filetype %s has extent %ld", bmpi_dt_name(filetype), (long)v->fextent);
    return BMPI_OK;
}

/* Validate the arguments of a view into *v (types not yet kept; layouts
 * made, released on failure). */
static int view_check(struct bmpi_file *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, struct bmpi_file_view *v)
{
    int err;
    if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_set(MPI_ERR_ARG, "disp MPI_DISPLACEMENT_CURRENT is only for files opened with "
                            "MPI_MODE_SEQUENTIAL");
    if (disp < 0)
        return bmpi_err_set(MPI_ERR_ARG, "disp %lld is negative", (long long)disp);
    if ((err = bmpi_dt_check_usable(etype, &v->edt)) || (err = bmpi_dt_check_usable(filetype, &v->fdt)))
        return err;
    if (!datarep)
        return bmpi_err_set(MPI_ERR_ARG, "datarep is NULL");
    if (!(v->rep = bmpi_datarep_find(datarep)))
        return MPI_ERR_UNSUPPORTED_DATAREP;
    if ((err = view_layouts(v)) || (err = view_shape(v, etype, filetype)))
        release_layouts(v);
    if (err)
        return err;
    v->disp = disp;
    v->contig = bmpi_dt_is_contig(v->fdt) && bmpi_dt_lb(v->fdt) == 0 && bmpi_dt_true_lb(v->fdt) == 0 &&
                (size_t)v->fextent == v->fsize;
    return BMPI_OK;
}

/* MPI_DISPLACEMENT_CURRENT (sequential files only): the byte the shared
 * pointer is at under the view being replaced. */
static int current_displacement(struct bmpi_file *f, MPI_Offset *disp)
{
    MPI_Offset etypes = 0;
    int err = bmpi_io_shared_position(f, &etypes);
    if (!err)
        *disp = bmpi_io_map_byte(&f->view, etypes * (MPI_Offset)f->view.esize);
    return err;
}

static int view_set(struct bmpi_file *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                    const char *datarep)
{
    struct bmpi_file_view v = {0};
    int err = BMPI_OK;
    if (disp == MPI_DISPLACEMENT_CURRENT && (f->amode & MPI_MODE_SEQUENTIAL))
        err = current_displacement(f, &disp);
    if (!err)
        err = view_check(f, disp, etype, filetype, datarep, &v);
    if (err)
        return err;
    if ((err = keep_type(etype, &v.etype))) {
        release_layouts(&v);
        return err;
    }
    if ((err = keep_type(filetype, &v.filetype))) {
        release_type(&v.etype);
        release_layouts(&v);
        return err;
    }
    bmpi_view_release(&f->view);
    f->view = v;
    f->pos = 0;
    return BMPI_OK;
}

BMPI_API(MPI_File_set_view)
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    const char *fn = "MPI_File_set_view";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (f->pending_ops || f->split || bmpi_io_shared_split_active(f))
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "operations on %s are still pending", f->path);
    int mine = view_set(f, disp, etype, filetype, datarep);
    if (!mine && info != MPI_INFO_NULL)
        mine = PMPI_File_set_info(fh, info);
    /* collective: every rank gets the view or none does */
    int worst = bmpi_io_agree(f, mine, "set the view of");
    if (!worst)
        worst = bmpi_io_shared_reset(f);
    if (worst)
        return bmpi_err_file_obj(f, worst, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_view)
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    const char *fn = "MPI_File_get_view";
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!disp || !etype || !filetype || !datarep)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "%s is NULL",
                                 !disp ? "disp" : !etype ? "etype" : !filetype ? "filetype" : "datarep");
    /* derived types as new handles: the standard has the caller free them */
    if ((err = keep_type(f->view.etype, etype)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    if ((err = keep_type(f->view.filetype, filetype))) {
        release_type(etype);
        return bmpi_err_file_obj(f, err, fn, NULL);
    }
    *disp = f->view.disp;
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", bmpi_datarep_name(f->view.rep));
    return MPI_SUCCESS;
}

static int type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent, const char *fn)
{
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!extent)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "extent is NULL");
    if (!bmpi_dt_get(datatype))
        return bmpi_err_file_obj(f, MPI_ERR_TYPE, fn, "invalid datatype 0x%x", (unsigned)datatype);
    if ((err = bmpi_datarep_extent(f->view.rep, datatype, extent)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_File_get_type_extent)
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    return type_extent(fh, datatype, extent, "MPI_File_get_type_extent");
}

BMPI_API(MPI_File_get_type_extent_c)
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    MPI_Aint e = 0;
    int err = type_extent(fh, datatype, extent ? &e : NULL, "MPI_File_get_type_extent_c");
    if (!err)
        *extent = e;
    return err;
}
