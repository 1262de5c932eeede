/* kernels/cuda_choices.h under the name kernels/cuda_watch.c still includes it by: nothing else
 * may include this file, which goes once that include names cuda_choices.h. */
#include "kernels/cuda_choices.h"
