# fortran/frt.mk: the hand-written glue of the Fortran bindings, for the
# routines that take callbacks or attribute values, and the predefined
# callback procedures (docs/fortran-internals.md).
libbmpifort_la_SOURCES += fortran/callbacks.c
