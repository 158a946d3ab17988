# runtime/datatype: MPI datatypes (objects, compiled layouts, the pack/unpack
# cursor, subarray/darray, external32, other
# representations' sizes and layouts) and the MPI_Type_*/Pack/Unpack entry
# points. See runtime/datatype.h.
libbmpi_core_la_SOURCES += \
	runtime/datatype.c runtime/datatype.h runtime/datatype_impl.h \
	runtime/dt_array.c \
	runtime/dt_external.c \
	runtime/dt_node.c \
	runtime/dt_pack.c \
	runtime/dt_repr.c \
	runtime/type_api.c
