! predefined_ops(): the predefined reductions on Fortran's types, checked
! the same way through every binding (f_coll.F90, f_coll_f08.f90). A
! subroutine to include in the CONTAINS part of a program with rank, n
! and check (frt_check.h).
  subroutine predefined_ops()
    use, intrinsic :: iso_fortran_env, only: int8, int16, int64, real32, real64
    integer :: ierr
    logical :: l, lres
    real :: r2(2), r2out(2)
    double precision :: d2(2), d2out(2)
    integer :: i2(2), i2out(2)
    complex :: c, cres
    double complex :: z, zres
    integer(int8) :: b1, b1res
    integer(int16) :: h2, h2res
    integer(int64) :: q8, q8res
    real(real32) :: f4, f4res
    real(real64) :: f8, f8res

    ! MAXLOC/MINLOC on the pair types; ties go to the lower index
    r2 = [real(rank / 2), real(rank)]
    call MPI_Allreduce(r2, r2out, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call check(r2out(1) == real((n - 1) / 2) .and. r2out(2) == real(2 * ((n - 1) / 2)), 'MAXLOC on MPI_2REAL')
    d2 = [dble(n - rank), dble(rank)]
    call MPI_Allreduce(d2, d2out, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(d2out(1) == 1.0d0 .and. d2out(2) == dble(n - 1), 'MINLOC on MPI_2DOUBLE_PRECISION')
    i2 = [mod(rank, 2), rank]
    call MPI_Allreduce(i2, i2out, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call check(i2out(1) == min(1, n - 1) .and. i2out(2) == min(1, n - 1), 'MAXLOC on MPI_2INTEGER')

    ! LOGICAL
    l = rank == 0
    call MPI_Allreduce(l, lres, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    call check(lres .eqv. (n == 1), 'MPI_LAND on MPI_LOGICAL')
    call MPI_Allreduce(l, lres, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
    call check(lres, 'MPI_LOR on MPI_LOGICAL')

    ! complex sums
    c = cmplx(real(rank), 1.0)
    call MPI_Allreduce(c, cres, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(cres == cmplx(real(n * (n - 1) / 2), real(n)), 'MPI_SUM on MPI_COMPLEX')
    z = dcmplx(dble(rank), -dble(rank))
    call MPI_Allreduce(z, zres, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(zres == dcmplx(dble(n * (n - 1) / 2), -dble(n * (n - 1) / 2)), 'MPI_SUM on MPI_DOUBLE_COMPLEX')

    ! sized types
    b1 = int(rank + 1, int8)
    call MPI_Allreduce(b1, b1res, 1, MPI_INTEGER1, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(b1res == int(n * (n + 1) / 2, int8), 'MPI_SUM on MPI_INTEGER1')
    h2 = int(1000 * rank, int16)
    call MPI_Allreduce(h2, h2res, 1, MPI_INTEGER2, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(h2res == int(1000 * (n - 1), int16), 'MPI_MAX on MPI_INTEGER2')
    q8 = 2_int64**40 + rank
    call MPI_Allreduce(q8, q8res, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(q8res == n * 2_int64**40 + n * (n - 1) / 2, 'MPI_SUM on MPI_INTEGER8')
    f4 = 0.5_real32 * rank
    call MPI_Allreduce(f4, f4res, 1, MPI_REAL4, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(f4res == 0.25_real32 * n * (n - 1), 'MPI_SUM on MPI_REAL4')
    f8 = -0.25_real64 * rank
    call MPI_Allreduce(f8, f8res, 1, MPI_REAL8, MPI_MIN, MPI_COMM_WORLD, ierr)
    call check(f8res == -0.25_real64 * (n - 1), 'MPI_MIN on MPI_REAL8')
  end subroutine predefined_ops
