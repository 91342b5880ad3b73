/* Writes an h5log run index for the crash test (h5log_write_run_index):
 *   tool_h5log_index RUN_H5 NODE_FILE_RELPATH...
 * node k links to the k-th path, relative to RUN_H5's directory. */
#include <stdio.h>

#include "io/h5log.h"

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s RUN_H5 NODE_FILE_RELPATH...\n", argv[0]);
        return 2;
    }
    char err[512];
    if (h5log_write_run_index(argv[1], argc - 2, (const char* const*)(argv + 2), err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    return 0;
}
