/* Check macros: wrap a call that can fail and stop with a one-line message naming the
 * source file and line (and the MPI rank once MPI is up). Library code that must report a
 * recoverable error to its caller returns an error code instead; these are for the
 * failures nothing can recover from. */
#ifndef SAPO_CORE_CHECK_H
#define SAPO_CORE_CHECK_H

#include <stddef.h>
#include <stdio.h>

/* Prints "sapo[rank R]: error at FILE:LINE: message" and ends the run (MPI_Abort when MPI
 * is initialized with more than one rank, exit(1) otherwise). */
void sapo_fail(const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
#define sapo_die(...) sapo_fail(__FILE__, __LINE__, __VA_ARGS__)

void* malloc_check(size_t size, const char* file, int line);
void* calloc_check(size_t n, size_t size, const char* file, int line);
FILE* fopen_check(const char* path, const char* mode, const char* file, int line);
void fread_check(void* ptr, size_t size, size_t n, FILE* f, const char* file, int line);
void fwrite_check(const void* ptr, size_t size, size_t n, FILE* f, const char* file, int line);
void fclose_check(FILE* f, const char* file, int line);
void mpi_check(int err, const char* file, int line);
void h5_check(long long status, const char* file, int line);

#define mallocCheck(size) malloc_check((size), __FILE__, __LINE__)
#define callocCheck(n, size) calloc_check((n), (size), __FILE__, __LINE__)
#define fopenCheck(path, mode) fopen_check((path), (mode), __FILE__, __LINE__)
#define freadCheck(ptr, size, n, f) fread_check((ptr), (size), (n), (f), __FILE__, __LINE__)
#define fwriteCheck(ptr, size, n, f) fwrite_check((ptr), (size), (n), (f), __FILE__, __LINE__)
#define fcloseCheck(f) fclose_check((f), __FILE__, __LINE__)
#define mpiCheck(call) mpi_check((call), __FILE__, __LINE__)
/* HDF5 calls return a negative hid_t / herr_t on failure. */
#define h5Check(call) h5_check((long long)(call), __FILE__, __LINE__)

/* Formats into a caller's error buffer (may be NULL); returns -1 so a failing function can
 * `return set_error(err, errlen, "...")`. */
int set_error(char* err, size_t errlen, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
