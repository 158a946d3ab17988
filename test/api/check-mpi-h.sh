#!/bin/sh
# include/mpi.h on its own: a program using a broad part of the API compiles
# without a warning as C99, C11 and C++, and, where MPICH's headers are
# installed (Debian: libmpich-dev), every constant and type size that both
# headers define is the same, which is what the MPICH ABI promise means.
# Constants that MPICH 4.0.2 lacks carry "(MPI 4.1)" or "not in MPICH 4.0.2"
# on their line in mpi.h and are left out of the comparison.
#
# Environment: top_srcdir (absolute); CC and CXX if set. Exit 77 without a C compiler.

set -u
: "${top_srcdir:?}"
inc=$top_srcdir/include
cc=${CC:-cc}
cxx=${CXX:-c++}

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP: no C compiler ($cc)"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-mpi-h.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

cat >"$tmp/user.c" <<'EOF'
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    double *a = (double *)in, *b = (double *)inout;
    int i;
    (void)dt;
    for (i = 0; i < *len; i++)
        if (a[i] > b[i]) b[i] = a[i];
}
static int copy_attr(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)key; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static void on_error(MPI_Comm *comm, int *code, ...) { (void)comm; (void)code; }
static void on_file_error(MPI_File *fh, int *code, ...) { (void)fh; (void)code; }
static int query(void *extra, MPI_Status *st) { (void)extra; MPI_Status_set_cancelled(st, 0); return 0; }
static int release(void *extra) { (void)extra; return 0; }
static int cancel(void *extra, int done) { (void)extra; (void)done; return 0; }
static int extent(MPI_Datatype t, MPI_Aint *e, void *extra) { (void)extra; return MPI_Type_get_extent(t, e, e); }
static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s, void *u)
{
    (void)ev; (void)reg; (void)s; (void)u;
}

/* A profiling wrapper, as tools write them */
int MPI_Barrier(MPI_Comm comm)
{
    return PMPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    int provided, rank, size, key, n, flag, sources[1] = {0}, codes[1];
    struct { double value; int rank; } best;
    double buf[4] = {0};
    char name[MPI_MAX_PROCESSOR_NAME], err[MPI_MAX_ERROR_STRING];
    MPI_Status st, sts[2];
    MPI_Request reqs[2];
    MPI_Op op;
    MPI_Errhandler eh;
    MPI_Datatype pair, vec;
    MPI_Comm dup, graph, inter;
    MPI_Win win;
    MPI_File fh;
    MPI_Session session;
    MPI_Info info;
    MPI_Message msg;
    MPI_Aint lb, ext, addr = MPI_Aint_add((MPI_Aint)0, (MPI_Aint)sizeof buf);
    MPI_Offset off = 0;
    MPI_Count count = 0;
    MPI_Fint f;
    double t0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    t0 = MPI_Wtime();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Error_string(MPI_ERR_UNSUPPORTED_OPERATION, err, &n);

    MPI_Irecv(buf, 4, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(buf, 4, MPI_DOUBLE, rank, 0, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, sts);
    MPI_Get_count(&sts[0], MPI_DOUBLE, &n);
    printf("%d %d %d\n", sts[0].MPI_SOURCE, sts[0].MPI_TAG, sts[0].MPI_ERROR);
    MPI_Sendrecv(buf, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, buf, 1, MPI_DOUBLE, MPI_PROC_NULL, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Mprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &msg, &st);
    MPI_Mrecv(buf, 1, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
    MPI_Waitall(0, reqs, MPI_STATUSES_IGNORE);
    MPI_Request_get_status_any(2, reqs, &n, &flag, &st);
    MPI_Status_get_source(&st, &n);
    MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);

    MPI_Op_create(maxabs, 1, &op);
    MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_DOUBLE, op, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    best.value = buf[0];
    best.rank = rank;
    MPI_Allreduce(MPI_IN_PLACE, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair);
    MPI_Reduce(buf, NULL, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Type_vector(2, 1, 2, MPI_INT64_T, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_get_extent(vec, &lb, &ext);
    MPI_Type_free(&vec);
    MPI_Get_address(buf, &addr);

    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_create_keyval(copy_attr, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &key, NULL);
    MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL);
    MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &addr, &flag);
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_File_create_errhandler(on_file_error, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &dup);
    MPI_Dist_graph_create_adjacent(dup, 1, sources, MPI_UNWEIGHTED, 1, sources, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &graph);
    MPI_Comm_spawn("worker", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, codes);
    MPI_Comm_free(&dup);

    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, buf, &win);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win);
    MPI_Put(buf, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(0, win);
    MPI_Win_free(&win);

    MPI_Grequest_start(query, release, cancel, NULL, &reqs[0]);
    MPI_Register_datarep("mine", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent, NULL);
    MPI_File_open(MPI_COMM_WORLD, "out", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_seek(fh, off, MPI_SEEK_SET);
    MPI_File_write_at_all(fh, off, buf, 4, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    f = MPI_Comm_c2f(MPI_COMM_WORLD);
    dup = MPI_Comm_f2c(f);
    f = MPI_File_c2f(MPI_FILE_NULL);
    (void)MPI_File_f2c(f);

    MPI_Info_create(&info);
    MPI_Info_set(info, "key", "value");
    MPI_Session_init(info, MPI_ERRORS_RETURN, &session);
    MPI_Session_finalize(&session);
    MPI_Info_free(&info);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_event_register_callback(NULL, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_event);
    MPI_T_finalize();
    MPI_Pcontrol(1, "phase");
    MPI_Get_elements_x(&st, MPI_BYTE, &count);

    printf("%g\n", MPI_Wtime() - t0 + MPI_Wtick());
    return MPI_Finalize();
}
EOF

for std in c99 c11; do
    if ! "$cc" -std=$std -Wall -Wextra -pedantic -Werror -I"$inc" -c "$tmp/user.c" -o "$tmp/user.o"; then
        echo "FAIL: a user program does not compile cleanly as $std against mpi.h"
        fail=1
    fi
done
if command -v "$cxx" >/dev/null 2>&1; then
    if ! "$cxx" -x c++ -Wall -Wextra -Werror -I"$inc" -c "$tmp/user.c" -o "$tmp/user.o"; then
        echo "FAIL: a user program does not compile cleanly as C++ against mpi.h"
        fail=1
    fi
else
    echo "note: no C++ compiler ($cxx), C++ not checked"
fi

# --- ABI: the same values as MPICH's header ----------------------------------
mpich=${MPICH_INCLUDE:-}
if [ -z "$mpich" ]; then
    arch=$("$cc" -print-multiarch 2>/dev/null || :)
    for d in ${arch:+/usr/include/$arch/mpich} /usr/include/mpich /usr/lib64/mpich/include; do
        if [ -f "$d/mpi.h" ] && [ -f "$d/mpio.h" ]; then mpich=$d; break; fi
    done
fi
if [ -z "$mpich" ]; then
    echo "note: MPICH's mpi.h not found (Debian: libmpich-dev), ABI values not compared"
    exit $fail
fi

# The constants both headers should share: our object-like MPI_ macros but the marked ones.
grep -v '(MPI 4\.1)\|not in MPICH 4\.0\.2' "$inc/mpi.h" |
    sed -n 's/^#define \(MPI_[A-Z0-9_]*\)[ 	].*/\1/p' |
    grep -v '^MPI_SUBVERSION$' >"$tmp/names"
{
    # printf, not echo: some shells' echo would turn the \n below into newlines
    printf '%s\n' '#include <mpi.h>' '#include <stddef.h>' '#include <stdint.h>' \
        '#include <stdio.h>' \
        '#define V(x) printf("%s %lld\n", #x, (long long)(intptr_t)(x))' \
        '#define S(t) printf("sizeof(%s) %d\n", #t, (int)sizeof(t))' \
        '#define O(m) printf("offsetof(MPI_Status, %s) %d\n", #m, (int)offsetof(MPI_Status, m))' \
        'int main(void) {'
    for t in MPI_Aint MPI_Offset MPI_Count MPI_Fint MPI_Status MPI_Comm MPI_Group MPI_Datatype \
             MPI_Op MPI_Request MPI_Message MPI_Errhandler MPI_Info MPI_Win MPI_Session MPI_File \
             MPI_T_enum MPI_T_cvar_handle MPI_T_pvar_handle MPI_T_pvar_session; do
        printf '    S(%s);\n' "$t"
    done
    for m in count_lo count_hi_and_cancelled MPI_SOURCE MPI_TAG MPI_ERROR; do
        printf '    O(%s);\n' "$m"
    done
    sed 's/.*/    V(&);/' "$tmp/names"
    printf '%s\n' '    return 0;' '}'
} >"$tmp/abi.c"

for side in ours mpich; do
    if [ $side = ours ]; then dir=$inc; else dir=$mpich; fi
    if ! "$cc" -w -I"$dir" "$tmp/abi.c" -o "$tmp/abi-$side" || ! "$tmp/abi-$side" >"$tmp/$side.txt"; then
        echo "FAIL: the ABI probe does not build or run against $side mpi.h ($dir)"
        [ $side = mpich ] && echo "(a constant MPICH lacks must say \"(MPI 4.1)\" or \"not in MPICH 4.0.2\" on its line in mpi.h)"
        exit 1
    fi
done
if ! diff "$tmp/mpich.txt" "$tmp/ours.txt" >"$tmp/diff"; then
    echo "FAIL: mpi.h differs from MPICH's ($mpich/mpi.h) in (< MPICH, > ours):"
    cat "$tmp/diff"
    fail=1
else
    echo "ok: $(wc -l <"$tmp/names") constants and the type sizes match MPICH's mpi.h"
fi
exit $fail
