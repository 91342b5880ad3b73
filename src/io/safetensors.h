/* Hugging Face .safetensors files: read the tensors of a checkpoint (one file, or a sharded
 * set named by model.safetensors.index.json) as f32, and write named f32 tensors to one file.
 * Layout: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name
 * to {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional "__metadata__" of
 * strings), then the data section the offsets index, row-major, little-endian. Everything in
 * the header is checked when the file opens (lengths, offsets, dtype size x shape = bytes, no
 * overlaps, no overflow), so reading afterwards only meets I/O errors. Reads go through
 * pread in chunks straight into the caller's buffer: a 2 GB checkpoint is never held twice. */
#ifndef SAPO_IO_SAFETENSORS_H
#define SAPO_IO_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define SAFETENSORS_MAX_DIMS 8

typedef struct {
    char* name;
    char dtype[16];   /* as the header spells it: "F32", "BF16", "I64", ... */
    int ndim;         /* 0 for a scalar */
    int64_t shape[SAFETENSORS_MAX_DIMS];
    uint64_t numel;   /* product of shape (1 for a scalar) */
    uint64_t begin;   /* byte range [begin, end) within the data section */
    uint64_t end;
} SafetensorsEntry;

typedef struct {
    char* path;
    int fd;
    uint64_t data_start; /* file offset of the data section: 8 + header length */
    int n_entries;
    SafetensorsEntry* entries; /* in header order */
} SafetensorsFile;

/* Opens and validates path. NULL with "PATH: what was wrong" in err. */
SafetensorsFile* safetensors_open(const char* path, char* err, size_t errlen);
void safetensors_close(SafetensorsFile* f);
/* The entry named name, or NULL. */
const SafetensorsEntry* safetensors_find(const SafetensorsFile* f, const char* name);
/* Reads entry e of f into out (e->numel floats), widening BF16 and F16 exactly; any other
 * dtype is refused ("PATH: tensor NAME has dtype I64; only F32, BF16 and F16 can be read"). */
int safetensors_read_f32(const SafetensorsFile* f, const SafetensorsEntry* e, float* out, char* err, size_t errlen);
/* Formats a shape as "[a, b, c]" into buf (always terminated); returns buf. */
char* safetensors_shape_str(const int64_t* shape, int ndim, char* buf, size_t buflen);

/* Exact widenings of one half-precision value (bit patterns), exposed for tests. */
float safetensors_bf16_to_f32(uint16_t h);
float safetensors_f16_to_f32(uint16_t h);

/* The weights of a Hugging Face model directory: DIR/model.safetensors when it exists (as
 * transformers prefers), else DIR/model.safetensors.index.json, whose "weight_map" names the
 * shard holding each tensor. Every shard is opened and validated up front, and every tensor
 * the index names must be in its shard. */
typedef struct {
    char* source;    /* the file errors name: DIR/model.safetensors or the index */
    int n_files;
    SafetensorsFile** files;
    int n_tensors;   /* the tensors of the set, each in one file */
    const SafetensorsEntry** tensors;
    int* tensor_file; /* index into files of each tensor */
} SafetensorsSet;

/* NULL with a one-line reason in err (neither file present, bad index, bad shard). */
SafetensorsSet* safetensors_set_open(const char* dir, char* err, size_t errlen);
void safetensors_set_close(SafetensorsSet* s);
/* Tensor name of the set, or NULL; *file (may be NULL) receives its shard. */
const SafetensorsEntry* safetensors_set_find(const SafetensorsSet* s, const char* name, const SafetensorsFile** file);

/* One tensor to write: ndim dims of shape, numel floats of data (row-major). */
typedef struct {
    const char* name;
    int ndim;
    const int64_t* shape;
    const float* data;
} SafetensorsTensor;

/* Writes the n tensors as F32 to path atomically (io/atomic_file.h: the old file or the
 * complete new one, never a prefix), sorted by name with contiguous offsets and the header
 * padded with spaces to a multiple of 8 bytes, as the Hugging Face writer does; with
 * pt_metadata the header carries "__metadata__": {"format": "pt"} (what transformers'
 * save_pretrained writes, and what its loader expects). Names must be distinct. */
int safetensors_write_f32(const char* path, const SafetensorsTensor* tensors, int n, int pt_metadata, char* err,
                          size_t errlen);

#endif
