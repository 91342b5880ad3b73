/* The GPU facts and placement for the layers above model (see gpu.h). */
#include "model/gpu.h"

#ifdef SAPO_HAVE_CUDA
#include "cuda_backend.h"
#endif

int model_gpu_available(void) {
#ifdef SAPO_HAVE_CUDA
    return cuda_backend_available();
#else
    return 0;
#endif
}

void model_gpu_set_local_rank(int local_rank, int local_size) {
#ifdef SAPO_HAVE_CUDA
    cuda_set_local_rank(local_rank, local_size);
#else
    (void)local_rank;
    (void)local_size;
#endif
}
