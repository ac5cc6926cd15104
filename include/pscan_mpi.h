/*
 * pscan_mpi.h - scans and reductions of one array spread over the processes of an MPI job. An add-on like
 * pscan_cuda.h: a separate library, pscan_mpi (CMake target pscan::pscan_mpi), built when CMake finds MPI.
 *
 * The array is the concatenation of every rank's slice in rank order (rank 0 first). Each rank works on its own
 * slice with its own context, on whatever backend that context has (CPU or CUDA; OpenCL has no reduce yet and
 * answers PSCAN_ERROR_UNSUPPORTED_ALGORITHM); only one element per rank crosses the network:
 *   1. each rank reduces its slice on its backend (pscan_reduce into device memory, downloaded: the one point
 *      where the call waits for the context's stream);
 *   2. MPI_Exscan of the slice totals with an MPI_Op made from the pscan operator, created non-commutative so
 *      that MPI combines them in rank order (a reverse scan exchanges them in reverse rank order, over a
 *      reversed copy of the communicator cached on it as an MPI attribute, made on the first reverse call);
 *   3. each rank scans its slice with init (+) the carry of the ranks before it as the initial value.
 * Slices may have any sizes, 0 included. Every rank must pass equal desc contents (type, op, flags, init), as
 * with any MPI collective; each call is collective over comm (every rank calls it, in the same order).
 *
 * Worked example on 3 ranks, inclusive sum:
 *   rank 0: in = [3 1 7]   rank 1: in = []   rank 2: in = [0 4 1 6 3]
 *   totals 11, 0, 14 -> carries 0, 11, 11
 *   rank 0: out = [3 4 11]  rank 1: out = []  rank 2: out = [11 15 16 22 25]
 *
 * Errors. A rank whose own arguments are refused returns that status and writes nothing, but still takes part in
 * the exchange (carrying its status instead of a total), so no rank is left waiting: the ranks whose carry
 * depends on it (the later ranks; the earlier ones for a reverse scan; all ranks for a reduce) return the same
 * status and write nothing either. An error in the last step (the local scan, such as an output overlapping
 * the input) is that rank's alone. MPI errors follow comm's error handler (MPI_ERRORS_ARE_FATAL by default);
 * under MPI_ERRORS_RETURN a failing MPI call gives PSCAN_ERROR_BACKEND.
 *
 * Order of combination: the totals are combined in rank order, never assumed commutative. A slice's total is
 * reduced in index order by pscan_reduce, also for a reverse scan (pscan has no reverse reduce): for the
 * built-in operators that changes nothing but, for float min and max, which of -0.0 and +0.0 (or which NaN's
 * bits) a reverse scan's carry holds when one slice holds both.
 */
#ifndef PSCAN_MPI_H
#define PSCAN_MPI_H

#include <mpi.h>

#include "pscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sets *bytes to the temporary storage pscan_mpi_scan() needs on this rank for this desc and n_local: room for
 * the slice's total and for the local reduce and scan. Returns the errors the local part of the call would. */
pscan_status pscan_mpi_scan_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, uint64_t n_local,
                                       size_t *bytes);

/* Scans the array made of every rank's slice: in and out are this rank's n_local elements (device pointers of
 * ctx's backend; out == in scans in place), and out receives this rank's part of the scan of the whole array,
 * as pscan_scan() defines it (inclusive, exclusive, reverse, init; init is the initial value of the whole
 * array). temp as for pscan_scan (device memory of temp_bytes >= pscan_mpi_scan_temp_bytes(), any address);
 * temp == NULL uses the context's workspace and one element of device memory allocated and freed on ctx's
 * stream. Collective and blocking up to the exchange: it waits for the slice's total, then returns with the
 * local scan enqueued on ctx's stream (finished, on the CPU backend).
 * Example: see the header comment (3 ranks, inclusive sum). */
pscan_status pscan_mpi_scan(pscan_context *ctx, MPI_Comm comm, const pscan_scan_desc *desc, const void *in,
                            void *out, uint64_t n_local, void *temp, size_t temp_bytes);

/* Sets *bytes to the temporary storage pscan_mpi_reduce() needs on this rank. */
pscan_status pscan_mpi_reduce_temp_bytes(pscan_context *ctx, const pscan_reduce_desc *desc, uint64_t n_local,
                                         size_t *bytes);

/* Reduces the whole array: every rank's *result (one element in device memory, as for pscan_reduce) receives
 * init (+) slice_0 (+) slice_1 (+) ... (+) slice_{P-1}, combined in rank order (MPI_Allreduce with a
 * non-commutative MPI_Op). Collective; temp as for pscan_mpi_scan. The result's write is enqueued on ctx's
 * stream. Example: slices [3 1 7], [], [0 4 1 6 3], PSCAN_OP_SUM -> *result = 25 on every rank. */
pscan_status pscan_mpi_reduce(pscan_context *ctx, MPI_Comm comm, const pscan_reduce_desc *desc, const void *in,
                              uint64_t n_local, void *result, void *temp, size_t temp_bytes);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_MPI_H */
