/* `sapo info`: what this build has (backends, libraries) and every config key. */
#include <cblas.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cli/blas_select.h"
#include "core/host_info.h"
#include "cli/commands.h"
#include "core/config.h"
#include "model/family.h"
#include "model/model.h"
#include "model/numerics.h"
#include "swarm/round_record.h"

static const CliOption OPTIONS[] = {
    {"columns", NULL, "instead, the per-round columns of a node log as a Markdown table (docs/SWARM.md's)"},
    {NULL, NULL, NULL},
};
enum { OPT_COLUMNS };

/* One line a model family with the devices it computes on in this build. */
static void print_families(void) {
    const ModelFamily* f;
    for (int id = 0; (f = model_family((ModelFamilyId)id)); id++) { /* model.family's choices, in order */
        printf("family     %-9s", f->name);
        for (const ModelBackend* const* b = f->backends; *b; b++) printf(" %s", (*b)->name);
        printf("\n");
    }
}

int cmd_info(int argc, char** argv) {
    CliArgs a;
    int rc = cli_parse("info", OPTIONS, argc, argv, &a);
    if (rc == 0 && a.n_pos > 0) rc = cli_unexpected("info", a.pos[0], "try --help");
    int columns = a.opt[OPT_COLUMNS] != NULL;
    cli_args_free(&a);
    if (rc > 0) {
        printf("usage: sapo info [--columns]\nPrints the build's backends and library versions, then every config key\n"
               "with its type, default, range or choices, whether nodes may differ, and help.\n");
        cli_print_options(stdout, OPTIONS);
        return 0;
    }
    if (rc < 0) return 2;
    if (columns) {
        printf("| dataset | meaning |\n|---|---|\n");
        for (int i = 0; i < RM_COUNT; i++) printf("| `%s` | %s |\n", ROUND_METRIC_NAMES[i], ROUND_METRIC_HELP[i]);
        return 0;
    }
    unsigned h5maj, h5min, h5rel;
    H5get_libversion(&h5maj, &h5min, &h5rel);
    char mpiver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(mpiver, &len);
    for (int i = 0; i < len; i++) if (mpiver[i] == '\n' || mpiver[i] == ',') { mpiver[i] = '\0'; break; }
    printf("# sapo build\n");
    printf("source     %s\n", SAPO_SOURCE_DIR);
    const ModelBackend* cuda = model_backend_built("cuda");
    if (cuda)
        printf("backends   cpu cuda (%s)\n", model_backend_runs(cuda) ? "a GPU is visible" : "built, but no GPU is visible");
    else
        printf("backends   cpu\n");
#ifdef SAPO_HAVE_NCCL
    print_families();
    printf("allgather  MPI, NCCL when every rank has its own GPU\n");
#else
    print_families();
    printf("allgather  MPI\n");
#endif
    printf("numerics   version %d (the default path; model.deterministic never changes its bits)\n",
           SAPO_NUMERICS_VERSION);
    printf("mpi        %s\n", mpiver);
    printf("hdf5       %u.%u.%u\n", h5maj, h5min, h5rel);
    char blas[256];
    blas_describe(blas, sizeof blas);
    printf("blas       %s\n", blas);
    char cpu[512];
    host_cpu_model(cpu, sizeof cpu);
    printf("cpu        %s\n", cpu);
    printf("\n");
    config_print_schema(stdout);
    return 0;
}
