/* The check macros' failure paths: one line on stderr, then the run stops. */
#include "core/check.h"

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void sapo_fail(const char* file, int line, const char* fmt, ...) {
    int mpi_up = 0, mpi_down = 0, rank = 0, size = 1;
    MPI_Initialized(&mpi_up);
    MPI_Finalized(&mpi_down);
    if (mpi_up && !mpi_down) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (size > 1) fprintf(stderr, "sapo[rank %d]: error at %s:%d: %s\n", rank, file, line, msg);
    else fprintf(stderr, "sapo: error at %s:%d: %s\n", file, line, msg);
    fflush(stderr);
    if (mpi_up && !mpi_down && size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void* malloc_check(size_t size, const char* file, int line) {
    void* p = malloc(size ? size : 1);
    if (!p) sapo_fail(file, line, "out of memory allocating %zu bytes", size);
    return p;
}

void* calloc_check(size_t n, size_t size, const char* file, int line) {
    void* p = calloc(n ? n : 1, size ? size : 1);
    if (!p) sapo_fail(file, line, "out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

FILE* fopen_check(const char* path, const char* mode, const char* file, int line) {
    FILE* f = fopen(path, mode);
    if (!f) sapo_fail(file, line, "cannot open '%s' (mode %s): %s", path, mode, strerror(errno));
    return f;
}

void fread_check(void* ptr, size_t size, size_t n, FILE* f, const char* file, int line) {
    size_t got = fread(ptr, size, n, f);
    if (got != n) {
        sapo_fail(file, line, "short read: wanted %zu items of %zu bytes, got %zu (%s)", n, size, got,
                  feof(f) ? "end of file" : strerror(errno));
    }
}

void fwrite_check(const void* ptr, size_t size, size_t n, FILE* f, const char* file, int line) {
    if (fwrite(ptr, size, n, f) != n) sapo_fail(file, line, "write failed: %s", strerror(errno));
}

void fclose_check(FILE* f, const char* file, int line) {
    if (fclose(f) != 0) sapo_fail(file, line, "close failed: %s", strerror(errno));
}

void mpi_check(int err, const char* file, int line) {
    if (err == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    sapo_fail(file, line, "MPI error: %s", msg);
}

void h5_check(long long status, const char* file, int line) {
    if (status < 0) sapo_fail(file, line, "HDF5 call failed (status %lld)", status);
}

int set_error(char* err, size_t errlen, const char* fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
