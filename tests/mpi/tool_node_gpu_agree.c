/* node_gpu_nccl_eligible (swarm/node_gpu.h) under mpirun, with the GPUs given rather than
 * found: argv[1] lists each rank's GPU id, comma-separated ("-": no GPU; "1x" before an id:
 * the rank sees only that one device, as with CUDA_VISIBLE_DEVICES per rank; else 4
 * devices); argv[2] "split": the even and the odd ranks as two machines. Every rank prints "rank R: ok=O why=W"; tests/mpi/test_node_gpu_agree.sh checks
 * the verdict and that the ranks agree. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "swarm/node_gpu.h"

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char list[512], id[NODE_GPU_ID_LEN] = "";
    snprintf(list, sizeof list, "%s", argc > 1 ? argv[1] : "");
    char* save = NULL;
    char* tok = strtok_r(list, ",", &save);
    for (int r = 0; tok && r < rank; r++) tok = strtok_r(NULL, ",", &save);
    int n_visible = 4;
    if (tok && strncmp(tok, "1x", 2) == 0) {
        n_visible = 1;
        tok += 2;
    }
    if (!tok || !strcmp(tok, "-")) n_visible = 0;
    else snprintf(id, sizeof id, "%s", tok);
    char why[200] = "";
    int ok;
    if (argc > 2 && !strcmp(argv[2], "split")) { /* two "machines": the even ranks, the odd ones */
        MPI_Comm machine;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &machine);
        ok = node_gpu_nccl_agree(MPI_COMM_WORLD, machine, id, n_visible, why, sizeof why);
        MPI_Comm_free(&machine);
    } else {
        ok = node_gpu_nccl_eligible(MPI_COMM_WORLD, id, n_visible, why, sizeof why);
    }
    printf("rank %d: ok=%d why=%s\n", rank, ok, ok ? "" : why);
    MPI_Finalize();
    return 0;
}
