C     Fortran target of the build-system tests, mpif.h in fixed form:
C     rank 0 sends each other rank a token it sends back, plus one.
      program hello_h
      implicit none
      include 'mpif.h'
      integer ierr, rank, nranks, token, peer
      integer status(MPI_STATUS_SIZE)
      call MPI_Init(ierr)
      call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
      call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
      if (rank .eq. 0) then
         do peer = 1, nranks - 1
            token = 10 * peer
            call MPI_Send(token, 1, MPI_INTEGER, peer, 3,
     &                    MPI_COMM_WORLD, ierr)
            call MPI_Recv(token, 1, MPI_INTEGER, peer, 4,
     &                    MPI_COMM_WORLD, status, ierr)
            if (token .ne. 10 * peer + 1 .or.
     &          status(MPI_SOURCE) .ne. peer) then
               call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
            end if
         end do
         print '(a,i0,a)', 'fortran mpif.h ok at ', nranks, ' ranks'
      else
         call MPI_Recv(token, 1, MPI_INTEGER, 0, 3, MPI_COMM_WORLD,
     &                 status, ierr)
         call MPI_Send(token + 1, 1, MPI_INTEGER, 0, 4,
     &                 MPI_COMM_WORLD, ierr)
      end if
      call MPI_Finalize(ierr)
      end
