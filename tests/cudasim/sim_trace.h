/* The simulated GPU's trace of stream order (tests/cudasim/sim_trace.c), for tests that assert
 * which operation is ordered after which (tests/cudasim/test_pass_graph.py). */
#ifndef GOLMPI_CUDASIM_TRACE_H
#define GOLMPI_CUDASIM_TRACE_H

#include "sim.h"

/* Under the lock, once op has its tick and vc its clock (sim_enqueue): one line to the trace
 * when GOLMPI_SIM_TRACE names a directory; nothing otherwise. */
void sim_trace_op(const struct CUstream_st *s, const sim_op *op, const sim_vc *vc);

#endif
