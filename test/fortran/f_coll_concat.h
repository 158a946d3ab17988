! concat(a, b): the digits of a then those of b (concat(12, 3) = 123), the
! associative but not commutative operation of the user ops of f_coll.F90
! and f_coll_f08.f90, and digits_to(k) = 12...k, what it makes of 1, 2 ...
! k in that order. Included in a CONTAINS part.
  elemental integer function concat(a, b)
    integer, intent(in) :: a, b
    integer :: shift
    shift = 1
    do while (shift <= b)
      shift = shift * 10
    end do
    concat = a * shift + b
  end function concat

  integer function digits_to(k)
    integer, intent(in) :: k
    integer :: i
    digits_to = 0
    do i = 1, k
      digits_to = digits_to * 10 + i
    end do
  end function digits_to
