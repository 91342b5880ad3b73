/* Reading and writing .safetensors files (see safetensors.h). The header rules follow the
 * reference implementation (huggingface/safetensors): a header of at most 100 MB, tensors
 * that tile the data section exactly (sorted by offset, each starting where the previous one
 * ends, the last ending at the end of the file), dtype size x shape = bytes. */
#include "io/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "io/atomic_file.h"
#include "io/files.h"

/* The reference reader refuses larger headers; so do we (it also bounds our allocation). */
#define MAX_HEADER_BYTES 100000000ull
/* Bytes per pread while widening half-precision tensors. */
#define READ_CHUNK (1u << 20)
/* JSON numbers are doubles: integers beyond 2^53 cannot be told apart. */
#define MAX_JSON_INT 9007199254740992.0

typedef struct {
    const char* name;
    int size; /* bytes per element */
} DtypeInfo;

/* Every dtype of the safetensors format with a whole number of bytes per element: such a
 * tensor may sit in a valid file (and be skipped), though only F32, BF16 and F16 are read. */
static const DtypeInfo DTYPES[] = {
    {"BOOL", 1}, {"U8", 1},   {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}, {"U16", 2}, {"I16", 2},
    {"F16", 2},  {"BF16", 2}, {"U32", 4}, {"I32", 4},     {"F32", 4},     {"U64", 8},     {"I64", 8}, {"F64", 8},
};

static int dtype_size(const char* name) {
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (!strcmp(DTYPES[i].name, name)) return DTYPES[i].size;
    return 0;
}

static int host_is_little_endian(void) {
    uint16_t x = 1;
    return *(unsigned char*)&x == 1;
}

float safetensors_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16; /* bf16 is the top half of an f32 */
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float safetensors_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13); /* inf, or nan with its payload kept */
    } else if (exp != 0) {
        bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign; /* +-0 */
    } else {
        /* subnormal: mant * 2^-24; shift the leading one up to the implicit bit */
        int e = -14;
        while (!(mant & 0x400)) {
            mant <<= 1;
            e--;
        }
        bits = sign | ((uint32_t)(e + 127) << 23) | ((mant & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

char* safetensors_shape_str(const int64_t* shape, int ndim, char* buf, size_t buflen) {
    if (!buflen) return buf;
    size_t n = 0;
    buf[0] = '\0';
    n += (size_t)snprintf(buf, buflen, "[");
    for (int i = 0; i < ndim && n < buflen; i++)
        n += (size_t)snprintf(buf + n, buflen - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < buflen) snprintf(buf + n, buflen - n, "]");
    return buf;
}

/* pread of exactly n bytes at off; 0, or -1 with errno set (0 = the file ended early). */
static int pread_all(int fd, void* buf, size_t n, uint64_t off) {
    char* p = buf;
    while (n) {
        ssize_t got = pread(fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            if (got == 0) errno = 0;
            return -1;
        }
        p += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return 0;
}

static const char* io_reason(void) { return errno ? strerror(errno) : "the file ended early"; }

/* A JSON number that is a non-negative integer a double holds exactly. */
static int json_uint(const cJSON* v, uint64_t* out) {
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (!(d >= 0 && d <= MAX_JSON_INT) || d != floor(d)) return 0;
    *out = (uint64_t)d;
    return 1;
}

/* Validates one tensor's header entry into e (name already set); the error names it. */
static int parse_entry(const char* path, const cJSON* t, uint64_t data_bytes, SafetensorsEntry* e, char* err,
                       size_t errlen) {
    if (!cJSON_IsObject(t)) return set_error(err, errlen, "%s: header entry %s is not an object", path, e->name);
    const cJSON* dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    const cJSON* sh = cJSON_GetObjectItemCaseSensitive(t, "shape");
    const cJSON* off = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
    if (!cJSON_IsString(dt)) return set_error(err, errlen, "%s: tensor %s has no dtype string", path, e->name);
    int esize = dtype_size(dt->valuestring);
    if (!esize)
        return set_error(err, errlen, "%s: tensor %s has dtype '%.20s', which is not a safetensors dtype", path,
                         e->name, dt->valuestring);
    snprintf(e->dtype, sizeof e->dtype, "%s", dt->valuestring);
    if (!cJSON_IsArray(sh)) return set_error(err, errlen, "%s: tensor %s has no shape array", path, e->name);
    int nd = cJSON_GetArraySize(sh);
    if (nd > SAFETENSORS_MAX_DIMS)
        return set_error(err, errlen, "%s: tensor %s has %d dimensions (at most %d are read)", path, e->name, nd,
                         SAFETENSORS_MAX_DIMS);
    e->ndim = nd;
    e->numel = 1;
    int i = 0;
    const cJSON* d;
    cJSON_ArrayForEach(d, sh) {
        uint64_t v;
        if (!json_uint(d, &v))
            return set_error(err, errlen, "%s: tensor %s has a shape entry that is not a non-negative integer", path,
                             e->name);
        e->shape[i++] = (int64_t)v;
        /* numel * esize must fit in 64 bits: check against the bound before multiplying */
        if (v && e->numel > UINT64_MAX / 8 / v)
            return set_error(err, errlen, "%s: tensor %s has a shape whose size overflows", path, e->name);
        e->numel *= v;
    }
    uint64_t bytes = e->numel * (uint64_t)esize;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !json_uint(cJSON_GetArrayItem(off, 0), &e->begin) ||
        !json_uint(cJSON_GetArrayItem(off, 1), &e->end))
        return set_error(err, errlen, "%s: tensor %s needs data_offsets [begin, end] of non-negative integers", path,
                         e->name);
    if (e->end < e->begin)
        return set_error(err, errlen, "%s: tensor %s has data_offsets [%llu, %llu] that end before they begin", path,
                         e->name, (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > data_bytes)
        return set_error(
            err, errlen, "%s: tensor %s has data_offsets [%llu, %llu] past the end of the data (%llu bytes)", path,
            e->name, (unsigned long long)e->begin, (unsigned long long)e->end, (unsigned long long)data_bytes);
    if (e->end - e->begin != bytes) {
        char s[128];
        return set_error(err, errlen, "%s: tensor %s of dtype %s and shape %s needs %llu bytes, its offsets give %llu",
                         path, e->name, e->dtype, safetensors_shape_str(e->shape, e->ndim, s, sizeof s),
                         (unsigned long long)bytes, (unsigned long long)(e->end - e->begin));
    }
    return 0;
}

static int metadata_check(const char* path, const cJSON* md, char* err, size_t errlen) {
    if (!cJSON_IsObject(md)) return set_error(err, errlen, "%s: __metadata__ is not an object", path);
    const cJSON* v;
    cJSON_ArrayForEach(v, md) {
        if (!cJSON_IsString(v))
            return set_error(err, errlen, "%s: __metadata__ entry %s is not a string", path, v->string);
    }
    return 0;
}

static int cmp_entry_offset(const void* a, const void* b) {
    const SafetensorsEntry* x = *(const SafetensorsEntry* const*)a;
    const SafetensorsEntry* y = *(const SafetensorsEntry* const*)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The tensors must tile [0, data_bytes): no gap, no overlap, nothing after the last. */
static int tiling_check(const SafetensorsFile* f, uint64_t data_bytes, char* err, size_t errlen) {
    if (f->n_entries == 0) {
        if (data_bytes)
            return set_error(err, errlen, "%s: %llu data bytes but no tensors", f->path,
                             (unsigned long long)data_bytes);
        return 0;
    }
    const SafetensorsEntry** order = mallocCheck((size_t)f->n_entries * sizeof *order);
    for (int i = 0; i < f->n_entries; i++) order[i] = &f->entries[i];
    qsort(order, (size_t)f->n_entries, sizeof *order, cmp_entry_offset);
    uint64_t at = 0;
    int rc = 0;
    for (int i = 0; i < f->n_entries && !rc; i++) {
        if (order[i]->begin != at)
            rc = set_error(err, errlen,
                           "%s: tensor %s starts at data byte %llu, expected %llu (tensors must tile the data section)",
                           f->path, order[i]->name, (unsigned long long)order[i]->begin, (unsigned long long)at);
        at = order[i]->end;
    }
    if (!rc && at != data_bytes)
        rc = set_error(err, errlen, "%s: the tensors cover %llu data bytes, the file holds %llu", f->path,
                       (unsigned long long)at, (unsigned long long)data_bytes);
    free(order);
    return rc;
}

void safetensors_close(SafetensorsFile* f) {
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    for (int i = 0; i < f->n_entries; i++) free(f->entries[i].name);
    free(f->entries);
    free(f->path);
    free(f);
}

/* The header of an opened file into f->entries: every check before anything is used. */
static int parse_header(SafetensorsFile* f, uint64_t file_size, char* err, size_t errlen) {
    if (file_size < 8)
        return set_error(err, errlen, "%s: %llu bytes, too short for the 8-byte header length", f->path,
                         (unsigned long long)file_size);
    unsigned char len8[8];
    if (pread_all(f->fd, len8, 8, 0)) return set_error(err, errlen, "%s: cannot read: %s", f->path, io_reason());
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)len8[i] << (8 * i);
    if (n > file_size - 8)
        return set_error(err, errlen, "%s: header length %llu runs past the end of the file (%llu bytes)", f->path,
                         (unsigned long long)n, (unsigned long long)file_size);
    if (n > MAX_HEADER_BYTES)
        return set_error(err, errlen, "%s: header length %llu exceeds %llu bytes", f->path, (unsigned long long)n,
                         MAX_HEADER_BYTES);
    f->data_start = 8 + n;
    uint64_t data_bytes = file_size - f->data_start;
    char* text = mallocCheck((size_t)n + 1);
    if (pread_all(f->fd, text, (size_t)n, 8)) {
        free(text);
        return set_error(err, errlen, "%s: cannot read the header: %s", f->path, io_reason());
    }
    text[n] = '\0';
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(text, (size_t)n, &end, 0);
    int rc = 0;
    if (!root) {
        long at = end ? (long)(end - text) : 0;
        rc = set_error(err, errlen, "%s: the header is not valid JSON (near byte %ld of %llu)", f->path, at,
                       (unsigned long long)n);
    } else {
        for (const char* p = end; p < text + n && !rc; p++)
            if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                rc = set_error(err, errlen, "%s: the header has text after its JSON (byte %ld)", f->path,
                               (long)(p - text));
        if (!rc && !cJSON_IsObject(root)) rc = set_error(err, errlen, "%s: the header is not a JSON object", f->path);
    }
    if (!rc) {
        int count = 0;
        const cJSON* t;
        cJSON_ArrayForEach(t, root) count++;
        f->entries = callocCheck((size_t)(count ? count : 1), sizeof *f->entries);
        cJSON_ArrayForEach(t, root) {
            if (!strcmp(t->string, "__metadata__")) {
                rc = metadata_check(f->path, t, err, errlen);
            } else {
                for (int i = 0; i < f->n_entries && !rc; i++)
                    if (!strcmp(f->entries[i].name, t->string))
                        rc = set_error(err, errlen, "%s: tensor %s appears twice in the header", f->path, t->string);
                if (!rc) {
                    SafetensorsEntry* e = &f->entries[f->n_entries++];
                    e->name = strdup(t->string);
                    if (!e->name) sapo_die("out of memory");
                    rc = parse_entry(f->path, t, data_bytes, e, err, errlen);
                }
            }
            if (rc) break;
        }
    }
    if (!rc) rc = tiling_check(f, data_bytes, err, errlen);
    cJSON_Delete(root);
    free(text);
    return rc;
}

SafetensorsFile* safetensors_open(const char* path, char* err, size_t errlen) {
    SafetensorsFile* f = callocCheck(1, sizeof *f);
    f->path = strdup(path);
    if (!f->path) sapo_die("out of memory");
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    int rc = 0;
    if (f->fd < 0)
        rc = set_error(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    else if (fstat(f->fd, &st) != 0)
        rc = set_error(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = set_error(err, errlen, "%s: not a regular file", path);
    else
        rc = parse_header(f, (uint64_t)st.st_size, err, errlen);
    if (rc) {
        safetensors_close(f);
        return NULL;
    }
    return f;
}

const SafetensorsEntry* safetensors_find(const SafetensorsFile* f, const char* name) {
    for (int i = 0; i < f->n_entries; i++)
        if (!strcmp(f->entries[i].name, name)) return &f->entries[i];
    return NULL;
}

int safetensors_read_f32(const SafetensorsFile* f, const SafetensorsEntry* e, float* out, char* err, size_t errlen) {
    int f32 = !strcmp(e->dtype, "F32"), bf16 = !strcmp(e->dtype, "BF16"), f16 = !strcmp(e->dtype, "F16");
    if (!f32 && !bf16 && !f16)
        return set_error(err, errlen, "%s: tensor %s has dtype %s; only F32, BF16 and F16 can be read", f->path,
                         e->name, e->dtype);
    if (!host_is_little_endian()) return set_error(err, errlen, "%s: big-endian hosts are not supported", f->path);
    uint64_t off = f->data_start + e->begin;
    if (f32) {
        /* straight into the caller's buffer, in chunks so one call never asks for gigabytes */
        uint64_t bytes = e->numel * 4, done = 0;
        while (done < bytes) {
            size_t n = bytes - done > (64u << 20) ? (64u << 20) : (size_t)(bytes - done);
            if (pread_all(f->fd, (char*)out + done, n, off + done))
                return set_error(err, errlen, "%s: cannot read tensor %s: %s", f->path, e->name, io_reason());
            done += n;
        }
        return 0;
    }
    unsigned char* buf = mallocCheck(READ_CHUNK);
    uint64_t left = e->numel, at = 0;
    int rc = 0;
    while (left && !rc) {
        size_t k = left > READ_CHUNK / 2 ? READ_CHUNK / 2 : (size_t)left;
        if (pread_all(f->fd, buf, k * 2, off + at * 2)) {
            rc = set_error(err, errlen, "%s: cannot read tensor %s: %s", f->path, e->name, io_reason());
            break;
        }
        for (size_t i = 0; i < k; i++) {
            uint16_t h = (uint16_t)(buf[2 * i] | (buf[2 * i + 1] << 8));
            out[at + i] = bf16 ? safetensors_bf16_to_f32(h) : safetensors_f16_to_f32(h);
        }
        at += k;
        left -= k;
    }
    free(buf);
    return rc;
}

/* ---- sharded sets ------------------------------------------------------------------------ */

static int is_regular(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void safetensors_set_close(SafetensorsSet* s) {
    if (!s) return;
    for (int i = 0; i < s->n_files; i++) safetensors_close(s->files[i]);
    free(s->files);
    free(s->tensors);
    free(s->tensor_file);
    free(s->source);
    free(s);
}

/* One weight_map entry t (tensor name -> shard file) into s, opening the shard the first
 * time it is named (shard_names[k] is the name of s->files[k]). */
static int index_add(SafetensorsSet* s, const char* dir, const cJSON* t, const char** shard_names, char* err,
                     size_t errlen) {
    const char* shard = cJSON_IsString(t) ? t->valuestring : NULL;
    /* a plain file name beside the index: never a path that leaves the directory */
    if (!shard || !*shard || strchr(shard, '/') || !strcmp(shard, "..") || !strcmp(shard, "."))
        return set_error(err, errlen, "%s: tensor %s maps to %s, not a file name in the directory", s->source,
                         t->string, shard ? shard : "a non-string");
    for (int i = 0; i < s->n_tensors; i++)
        if (!strcmp(s->tensors[i]->name, t->string))
            return set_error(err, errlen, "%s: tensor %s is mapped twice", s->source, t->string);
    int k = 0;
    while (k < s->n_files && strcmp(shard_names[k], shard)) k++;
    if (k == s->n_files) {
        char* p = path_join(dir, shard);
        s->files[k] = safetensors_open(p, err, errlen);
        free(p);
        if (!s->files[k]) return -1;
        shard_names[k] = shard;
        s->n_files++;
    }
    const SafetensorsEntry* e = safetensors_find(s->files[k], t->string);
    if (!e)
        return set_error(err, errlen, "%s: tensor %s is mapped to %s, which does not hold it", s->source, t->string,
                         shard);
    s->tensors[s->n_tensors] = e;
    s->tensor_file[s->n_tensors++] = k;
    return 0;
}

static int set_from_index(SafetensorsSet* s, const char* dir, char* err, size_t errlen) {
    char* text = file_read_all(s->source, 64u << 20, NULL);
    if (!text) {
        if (errno == EFBIG) return set_error(err, errlen, "%s: larger than %zu bytes", s->source, (size_t)64u << 20);
        if (errno == EIO) return set_error(err, errlen, "%s: cannot read", s->source);
        return set_error(err, errlen, "%s: cannot open: %s", s->source, strerror(errno));
    }
    cJSON* root = cJSON_Parse(text);
    free(text);
    const cJSON* map = root ? cJSON_GetObjectItemCaseSensitive(root, "weight_map") : NULL;
    int rc = 0;
    if (!root)
        rc = set_error(err, errlen, "%s: not valid JSON", s->source);
    else if (!cJSON_IsObject(map))
        rc = set_error(err, errlen, "%s: no \"weight_map\" object", s->source);
    if (rc) {
        cJSON_Delete(root);
        return rc;
    }
    int count = 0;
    const cJSON* t;
    cJSON_ArrayForEach(t, map) count++;
    const char** shard_names = callocCheck((size_t)count + 1, sizeof *shard_names);
    s->files = callocCheck((size_t)count + 1, sizeof *s->files);
    s->tensors = callocCheck((size_t)count + 1, sizeof *s->tensors);
    s->tensor_file = callocCheck((size_t)count + 1, sizeof *s->tensor_file);
    cJSON_ArrayForEach(t, map) {
        rc = index_add(s, dir, t, shard_names, err, errlen);
        if (rc) break;
    }
    free(shard_names);
    cJSON_Delete(root);
    return rc;
}

SafetensorsSet* safetensors_set_open(const char* dir, char* err, size_t errlen) {
    SafetensorsSet* s = callocCheck(1, sizeof *s);
    char* single = path_join(dir, "model.safetensors");
    int rc = 0;
    if (is_regular(single)) {
        s->source = single;
        s->files = callocCheck(1, sizeof *s->files);
        s->files[0] = safetensors_open(single, err, errlen);
        if (!s->files[0]) {
            rc = -1;
        } else {
            s->n_files = 1;
            s->n_tensors = s->files[0]->n_entries;
            s->tensors = callocCheck((size_t)s->n_tensors + 1, sizeof *s->tensors);
            s->tensor_file = callocCheck((size_t)s->n_tensors + 1, sizeof *s->tensor_file);
            for (int i = 0; i < s->n_tensors; i++) s->tensors[i] = &s->files[0]->entries[i];
        }
    } else {
        free(single);
        s->source = path_join(dir, "model.safetensors.index.json");
        if (!is_regular(s->source))
            rc = set_error(err, errlen, "%s: holds neither model.safetensors nor model.safetensors.index.json", dir);
        else
            rc = set_from_index(s, dir, err, errlen);
    }
    if (rc) {
        safetensors_set_close(s);
        return NULL;
    }
    return s;
}

const SafetensorsEntry* safetensors_set_find(const SafetensorsSet* s, const char* name, const SafetensorsFile** file) {
    for (int i = 0; i < s->n_tensors; i++) {
        if (!strcmp(s->tensors[i]->name, name)) {
            if (file) *file = s->files[s->tensor_file[i]];
            return s->tensors[i];
        }
    }
    return NULL;
}

/* ---- writer ------------------------------------------------------------------------------ */

typedef struct {
    char* p;
    size_t n, cap;
} Buf;

static void buf_put(Buf* b, const char* s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        while (b->n + n + 1 > b->cap) b->cap = b->cap ? 2 * b->cap : 4096;
        char* grown = realloc(b->p, b->cap);
        if (!grown) sapo_die("out of memory");
        b->p = grown;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}
static void buf_str(Buf* b, const char* s) { buf_put(b, s, strlen(s)); }

/* A JSON string literal of s (quotes, backslashes and control bytes escaped; UTF-8 as is). */
static void buf_json_string(Buf* b, const char* s) {
    buf_str(b, "\"");
    for (const unsigned char* p = (const unsigned char*)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            buf_put(b, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            buf_str(b, esc);
        } else {
            buf_put(b, (const char*)p, 1);
        }
    }
    buf_str(b, "\"");
}

static int cmp_tensor_name(const void* a, const void* b) {
    return strcmp((*(const SafetensorsTensor* const*)a)->name, (*(const SafetensorsTensor* const*)b)->name);
}

int safetensors_write_f32(const char* path, const SafetensorsTensor* tensors, int n, int pt_metadata, char* err,
                          size_t errlen) {
    if (!host_is_little_endian()) return set_error(err, errlen, "%s: big-endian hosts are not supported", path);
    const SafetensorsTensor** order = mallocCheck((size_t)(n ? n : 1) * sizeof *order);
    uint64_t* numel = mallocCheck((size_t)(n ? n : 1) * sizeof *numel);
    for (int i = 0; i < n; i++) order[i] = &tensors[i];
    qsort(order, (size_t)n, sizeof *order, cmp_tensor_name);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        const SafetensorsTensor* t = order[i];
        if (!t->name || !*t->name || !strcmp(t->name, "__metadata__"))
            rc = set_error(err, errlen, "%s: tensor %d has no usable name", path, i);
        else if (i && !strcmp(order[i - 1]->name, t->name))
            rc = set_error(err, errlen, "%s: tensor %s given twice", path, t->name);
        else if (t->ndim < 0 || t->ndim > SAFETENSORS_MAX_DIMS)
            rc = set_error(err, errlen, "%s: tensor %s has %d dimensions", path, t->name, t->ndim);
        numel[i] = 1;
        for (int d = 0; d < t->ndim && !rc; d++) {
            if (t->shape[d] < 0 || (t->shape[d] && numel[i] > (uint64_t)MAX_JSON_INT / 4 / (uint64_t)t->shape[d]))
                rc = set_error(err, errlen, "%s: tensor %s has a bad shape", path, t->name);
            else
                numel[i] *= (uint64_t)t->shape[d];
        }
    }
    Buf h = {0};
    if (!rc) {
        buf_str(&h, "{");
        if (pt_metadata) buf_str(&h, "\"__metadata__\":{\"format\":\"pt\"}");
        uint64_t at = 0;
        for (int i = 0; i < n; i++) {
            char num[64];
            if (i || pt_metadata) buf_str(&h, ",");
            buf_json_string(&h, order[i]->name);
            buf_str(&h, ":{\"dtype\":\"F32\",\"shape\":[");
            for (int d = 0; d < order[i]->ndim; d++) {
                snprintf(num, sizeof num, "%s%lld", d ? "," : "", (long long)order[i]->shape[d]);
                buf_str(&h, num);
            }
            snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at,
                     (unsigned long long)(at + numel[i] * 4));
            buf_str(&h, num);
            at += numel[i] * 4;
        }
        buf_str(&h, "}");
        while (h.n % 8) buf_str(&h, " "); /* the data section starts 8-byte aligned */
    }
    FILE* fp = rc ? NULL : atomic_file_begin(path, err, errlen);
    if (!rc && !fp) rc = -1;
    if (!rc) {
        unsigned char len8[8];
        for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)h.n >> (8 * i));
        fwrite(len8, 1, 8, fp);
        fwrite(h.p, 1, h.n, fp);
        for (int i = 0; i < n && !ferror(fp); i++)
            if (numel[i]) fwrite(order[i]->data, sizeof(float), (size_t)numel[i], fp);
        rc = atomic_file_commit(fp, path, err, errlen); /* a failed fwrite fails the commit */
    }
    free(h.p);
    free(order);
    free(numel);
    return rc;
}
