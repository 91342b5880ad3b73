/* The OpenBLAS kernel sapo runs on (see blas_select.c). */
#ifndef SAPO_CLI_BLAS_SELECT_H
#define SAPO_CLI_BLAS_SELECT_H

#include <stddef.h>

/* Re-executes sapo with OPENBLAS_CORETYPE set when OpenBLAS fell back to a generic kernel on
 * a CPU with AVX2/AVX-512; returns when nothing needs doing. Call first in main. */
void blas_select_kernel(char** argv);
/* One line: library configuration and the kernel in use (for logs and `sapo info`). */
void blas_describe(char* out, size_t n);

#endif
