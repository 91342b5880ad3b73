/* The tagged binary format of the reference tools' dumps (tool_model_dump, tool_llama_dump),
 * which the pytest side reads with numpy (read_dump in test_model_vs_torch.py): per record a
 * u32 name length, the name, a u8 dtype (0 f32, 1 i32), a u32 rank, u32 dims, the data. */
#ifndef SAPO_TESTS_DUMP_WRITER_H
#define SAPO_TESTS_DUMP_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/check.h"

static inline void put_array(FILE* f, const char* name, int is_int, const void* data, int ndim, const int* dims) {
    uint32_t len = (uint32_t)strlen(name), nd = (uint32_t)ndim;
    uint8_t dtype = is_int ? 1 : 0;
    fwriteCheck(&len, 4, 1, f);
    fwriteCheck(name, 1, len, f);
    fwriteCheck(&dtype, 1, 1, f);
    fwriteCheck(&nd, 4, 1, f);
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        uint32_t d = (uint32_t)dims[i];
        fwriteCheck(&d, 4, 1, f);
        count *= (size_t)dims[i];
    }
    fwriteCheck(data, 4, count, f);
}

#endif
