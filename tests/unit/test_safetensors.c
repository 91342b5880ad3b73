/* .safetensors files (io/safetensors.h): f32 round trip through the writer; hand-made BF16
 * and F16 payloads widen exactly (every F16 bit pattern against an independent formula,
 * subnormals, infinities and NaNs included); each kind of corrupted file gives its own
 * one-line error naming the file and no crash; a sharded set finds tensors across shards. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/files.h"
#include "io/safetensors.h"
#include "../test_assert.h"

static char DIR_[256];

static char* tmp_path(const char* name) {
    static char buf[8][512];
    static int k = 0;
    char* p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", DIR_, name);
    return p;
}

static uint32_t bits_of(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* A file of header `json` (padded as given) and `data_len` bytes of data. */
static void write_raw(const char* path, const char* json, uint64_t header_len, const void* data, size_t data_len) {
    FILE* f = fopen(path, "wb");
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)(header_len >> (8 * i));
    fwrite(len8, 1, 8, f);
    fwrite(json, 1, strlen(json), f);
    if (data_len) fwrite(data, 1, data_len, f);
    fclose(f);
}
static void write_st(const char* path, const char* json, const void* data, size_t data_len) {
    write_raw(path, json, strlen(json), data, data_len);
}

static void test_round_trip(void) {
    float a[6] = {1.5f, -2.25f, 0.0f, -0.0f, 3e-39f /* subnormal */, INFINITY};
    float b[2 * 3 * 4];
    for (int i = 0; i < 24; i++) b[i] = (float)i * 0.1f - 1.0f;
    float s[1] = {42.0f};
    int64_t sa[] = {2, 3}, sb[] = {2, 3, 4}, sz[] = {0, 5};
    SafetensorsTensor t[] = {
        {"model.b", 3, sb, b},
        {"a \"quoted\" name", 2, sa, a},
        {"scalar", 0, NULL, s},
        {"empty", 2, sz, NULL},
    };
    char err[512] = "";
    const char* path = tmp_path("rt.safetensors");
    EXPECT(safetensors_write_f32(path, t, 4, 1, err, sizeof err) == 0, "write: %s", err);
    EXPECT(access(tmp_path("rt.safetensors.tmp"), F_OK) != 0, "the temporary file is gone");
    SafetensorsFile* f = safetensors_open(path, err, sizeof err);
    EXPECT(f != NULL, "open: %s", err);
    if (!f) return;
    EXPECT(f->n_entries == 4, "4 entries, got %d", f->n_entries);
    EXPECT(f->data_start % 8 == 0, "data starts 8-aligned (%llu)", (unsigned long long)f->data_start);
    /* the header lists tensors sorted by name, contiguous from offset 0 */
    EXPECT(!strcmp(f->entries[0].name, "a \"quoted\" name") && !strcmp(f->entries[1].name, "empty") &&
               !strcmp(f->entries[2].name, "model.b") && !strcmp(f->entries[3].name, "scalar"),
           "sorted names");
    EXPECT(f->entries[0].begin == 0 && f->entries[0].end == 24, "first tensor at [0, 24)");
    const SafetensorsEntry* e = safetensors_find(f, "model.b");
    EXPECT(e && e->ndim == 3 && e->shape[0] == 2 && e->shape[1] == 3 && e->shape[2] == 4 && e->numel == 24,
           "model.b shape");
    EXPECT(e && !strcmp(e->dtype, "F32"), "dtype F32");
    float got[24];
    EXPECT(e && safetensors_read_f32(f, e, got, err, sizeof err) == 0, "read: %s", err);
    for (int i = 0; i < 24; i++) EXPECT(bits_of(got[i]) == bits_of(b[i]), "model.b[%d]", i);
    e = safetensors_find(f, "a \"quoted\" name");
    EXPECT(e && safetensors_read_f32(f, e, got, err, sizeof err) == 0, "read a: %s", err);
    for (int i = 0; i < 6; i++) EXPECT(bits_of(got[i]) == bits_of(a[i]), "a[%d]", i);
    e = safetensors_find(f, "scalar");
    EXPECT(e && e->ndim == 0 && e->numel == 1, "scalar shape []");
    EXPECT(e && safetensors_read_f32(f, e, got, err, sizeof err) == 0 && got[0] == 42.0f, "scalar value");
    e = safetensors_find(f, "empty");
    EXPECT(e && e->numel == 0 && e->begin == e->end, "empty tensor");
    EXPECT(safetensors_find(f, "nope") == NULL, "unknown name: NULL");
    safetensors_close(f);

    /* the metadata the transformers loader looks for */
    FILE* fp = fopen(path, "rb");
    char head[64] = {0};
    fread(head, 1, sizeof head - 1, fp);
    fclose(fp);
    EXPECT(!memcmp(head + 8, "{\"__metadata__\":{\"format\":\"pt\"}", 31), "metadata first: %s", head + 8);

    /* duplicate names refused, and nothing written */
    SafetensorsTensor dup[] = {{"x", 1, sz + 1, b}, {"x", 1, sz + 1, b}};
    const char* dpath = tmp_path("dup.safetensors");
    EXPECT(safetensors_write_f32(dpath, dup, 2, 0, err, sizeof err) != 0, "duplicates refused");
    EXPECT_MSG(err, "tensor x given twice");
    EXPECT(access(dpath, F_OK) != 0, "no file written");
}

/* The value of an f16 bit pattern by its definition, in double (no bit tricks). */
static double f16_reference(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
    return sign ? -v : v;
}

static void test_half_payloads(void) {
    uint16_t bf[] = {0x3f80, 0xc000, 0x0001, 0x807f, 0x7f80, 0xff80, 0x7fc1, 0x8000, 0x3eaa};
    uint16_t hf[] = {0x3c00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e01, 0x8000, 0x8001, 0x3555};
    enum { NBF = sizeof bf / sizeof bf[0], NHF = sizeof hf / sizeof hf[0] };
    unsigned char data[2 * (NBF + NHF)];
    for (int i = 0; i < NBF; i++) data[2 * i] = bf[i] & 0xff, data[2 * i + 1] = bf[i] >> 8;
    for (int i = 0; i < NHF; i++) data[2 * (NBF + i)] = hf[i] & 0xff, data[2 * (NBF + i) + 1] = hf[i] >> 8;
    char json[256];
    snprintf(json, sizeof json,
             "{\"b\":{\"dtype\":\"BF16\",\"shape\":[%d],\"data_offsets\":[0,%d]},"
             "\"h\":{\"dtype\":\"F16\",\"shape\":[1,%d],\"data_offsets\":[%d,%d]},\"__metadata__\":{\"k\":\"v\"}}",
             NBF, 2 * NBF, NHF, 2 * NBF, 2 * (NBF + NHF));
    const char* path = tmp_path("half.safetensors");
    write_st(path, json, data, sizeof data);
    char err[512] = "";
    SafetensorsFile* f = safetensors_open(path, err, sizeof err);
    EXPECT(f != NULL, "open: %s", err);
    if (!f) return;
    float got[16];
    const SafetensorsEntry* e = safetensors_find(f, "b");
    EXPECT(e && safetensors_read_f32(f, e, got, err, sizeof err) == 0, "read bf16: %s", err);
    for (int i = 0; i < NBF; i++)
        EXPECT(bits_of(got[i]) == (uint32_t)bf[i] << 16, "bf16 %04x -> %08x", bf[i], bits_of(got[i]));
    EXPECT(got[0] == 1.0f && got[1] == -2.0f && isinf(got[4]) && isnan(got[6]), "bf16 values");
    e = safetensors_find(f, "h");
    EXPECT(e && safetensors_read_f32(f, e, got, err, sizeof err) == 0, "read f16: %s", err);
    EXPECT(got[0] == 1.0f, "f16 1.0");
    EXPECT(got[1] == ldexpf(1.0f, -24), "f16 smallest subnormal 2^-24 (got %g)", got[1]);
    EXPECT(got[2] == 1023.0f * ldexpf(1.0f, -24), "f16 largest subnormal");
    EXPECT(got[3] == ldexpf(1.0f, -14), "f16 smallest normal");
    EXPECT(got[4] == 65504.0f, "f16 max");
    EXPECT(isinf(got[5]) && got[5] > 0 && isinf(got[6]) && got[6] < 0, "f16 infinities");
    EXPECT(bits_of(got[7]) == (0x7f800000u | (0x201u << 13)), "f16 nan keeps its payload (%08x)", bits_of(got[7]));
    EXPECT(bits_of(got[8]) == 0x80000000u, "f16 -0");
    EXPECT(got[9] == -ldexpf(1.0f, -24), "f16 negative subnormal");
    safetensors_close(f);

    /* every f16 bit pattern against the definition */
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float v = safetensors_f16_to_f32((uint16_t)h);
        int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        if (exp == 0x1f) {
            int ok = mant ? isnan(v) && (bits_of(v) & 0x7fffff) == (uint32_t)mant << 13 : isinf(v);
            ok = ok && (signbit(v) != 0) == (h >> 15);
            bad += !ok;
        } else {
            double want = f16_reference((uint16_t)h);
            bad += (double)v != want || (signbit(v) != 0) != (h >> 15);
        }
    }
    EXPECT(bad == 0, "%d of 65536 f16 patterns widen wrongly", bad);
}

/* One corrupted file (header_len 0: the JSON's length): open fails with a message naming the file and `fragment`. */
static void expect_corrupt(const char* name, const char* json, uint64_t header_len, size_t data_len,
                           const char* fragment) {
    unsigned char data[64] = {0};
    const char* path = tmp_path(name);
    write_raw(path, json, header_len ? header_len : strlen(json), data, data_len);
    char err[512] = "";
    SafetensorsFile* f = safetensors_open(path, err, sizeof err);
    EXPECT(f == NULL, "%s: opened a corrupted file", name);
    safetensors_close(f);
    EXPECT_MSG(err, path);
    EXPECT_MSG(err, fragment);
    EXPECT(strchr(err, '\n') == NULL, "one line: %s", err);
}

static void test_corrupt(void) {
    const char* ok = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    expect_corrupt("c_len.safetensors", ok, 100000, 8, "header length 100000 runs past the end of the file");
    expect_corrupt("c_huge.safetensors", ok, UINT64_MAX, 8, "runs past the end");
    expect_corrupt("c_json.safetensors", "{\"w\":{\"dtype\":\"F32\",", 0, 0, "not valid JSON");
    expect_corrupt("c_trail.safetensors", "{}xx", 0, 0, "text after its JSON");
    expect_corrupt("c_array.safetensors", "[1, 2]  ", 0, 0, "not a JSON object");
    expect_corrupt("c_past.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[100],\"data_offsets\":[0,400]}}", 0, 8,
                   "past the end of the data (8 bytes)");
    expect_corrupt("c_shape.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 0, 8,
                   "tensor w of dtype F32 and shape [3] needs 12 bytes, its offsets give 8");
    expect_corrupt("c_dtype.safetensors", "{\"w\":{\"dtype\":\"F17\",\"shape\":[2],\"data_offsets\":[0,8]}}", 0, 8,
                   "tensor w has dtype 'F17', which is not a safetensors dtype");
    expect_corrupt("c_neg.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 0, 8,
                   "shape entry that is not a non-negative integer");
    expect_corrupt("c_frac.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8.5]}}", 0, 8,
                   "needs data_offsets");
    expect_corrupt("c_rev.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}}", 0, 8,
                   "end before they begin");
    expect_corrupt("c_ovf.safetensors",
                   "{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 0, 8,
                   "overflows");
    expect_corrupt("c_hole.safetensors",
                   "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                   0, 12, "tensor b starts at data byte 8, expected 4");
    expect_corrupt("c_overlap.safetensors",
                   "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                   0, 8, "starts at data byte 4, expected 8");
    expect_corrupt("c_tail.safetensors", ok, 0, 12, "the tensors cover 8 data bytes, the file holds 12");
    expect_corrupt("c_dup.safetensors",
                   "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                   0, 8, "tensor w appears twice");
    expect_corrupt("c_meta.safetensors", "{\"__metadata__\":{\"format\":1}}", 0, 0, "__metadata__ entry format");
    expect_corrupt("c_nodtype.safetensors", "{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 0, 8, "no dtype");

    /* shorter than the length field */
    const char* path = tmp_path("c_short.safetensors");
    FILE* fp = fopen(path, "wb");
    fwrite("abc", 1, 3, fp);
    fclose(fp);
    char err[512] = "";
    EXPECT(safetensors_open(path, err, sizeof err) == NULL, "3-byte file");
    EXPECT_MSG(err, "3 bytes, too short");
    EXPECT(safetensors_open(tmp_path("missing.safetensors"), err, sizeof err) == NULL, "missing file");
    EXPECT_MSG(err, "missing.safetensors: cannot open");
    EXPECT(safetensors_open(DIR_, err, sizeof err) == NULL, "a directory");
    EXPECT_MSG(err, "not a regular file");

    /* a valid file with a dtype the reader does not widen */
    int64_t vals[2] = {1, 2};
    path = tmp_path("i64.safetensors");
    write_st(path, "{\"ids\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]}}", vals, sizeof vals);
    SafetensorsFile* f = safetensors_open(path, err, sizeof err);
    EXPECT(f != NULL, "an I64 tensor is a valid file: %s", err);
    if (f) {
        float out[4];
        EXPECT(safetensors_read_f32(f, &f->entries[0], out, err, sizeof err) != 0, "I64 not read");
        EXPECT_MSG(err, "tensor ids has dtype I64; only F32, BF16 and F16 can be read");
        safetensors_close(f);
    }

    /* the file shrinks after it was opened: a read error, not a crash */
    float w[256];
    for (int i = 0; i < 256; i++) w[i] = (float)i;
    int64_t shape[1] = {256};
    SafetensorsTensor t = {"w", 1, shape, w};
    path = tmp_path("shrink.safetensors");
    EXPECT(safetensors_write_f32(path, &t, 1, 0, err, sizeof err) == 0, "write: %s", err);
    f = safetensors_open(path, err, sizeof err);
    EXPECT(f != NULL, "open: %s", err);
    if (f) {
        EXPECT(truncate(path, 200) == 0, "truncate");
        float out[256];
        EXPECT(safetensors_read_f32(f, &f->entries[0], out, err, sizeof err) != 0, "read of a truncated file fails");
        EXPECT_MSG(err, "cannot read tensor w: the file ended early");
        safetensors_close(f);
    }
}

static void test_sharded(void) {
    char sub[300], err[512] = "";
    snprintf(sub, sizeof sub, "%s/sharded", DIR_);
    mkdir(sub, 0755);
    float a[4] = {1, 2, 3, 4}, b[3] = {-1, -2, -3}, c[2] = {7, 8};
    int64_t sa[] = {2, 2}, sb[] = {3}, sc[] = {2};
    SafetensorsTensor s1[] = {{"layer.0.a", 2, sa, a}, {"layer.0.c", 1, sc, c}}, s2[] = {{"layer.1.b", 1, sb, b}};
    char p1[400], p2[400], idx[400];
    snprintf(p1, sizeof p1, "%s/model-00001-of-00002.safetensors", sub);
    snprintf(p2, sizeof p2, "%s/model-00002-of-00002.safetensors", sub);
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", sub);
    EXPECT(safetensors_write_f32(p1, s1, 2, 1, err, sizeof err) == 0, "shard 1: %s", err);
    EXPECT(safetensors_write_f32(p2, s2, 1, 1, err, sizeof err) == 0, "shard 2: %s", err);

    EXPECT(safetensors_set_open(sub, err, sizeof err) == NULL, "no index yet");
    EXPECT_MSG(err, "holds neither model.safetensors nor model.safetensors.index.json");

    FILE* fp = fopen(idx, "w");
    fprintf(
        fp,
        "{\"metadata\": {\"total_size\": 36}, \"weight_map\": {\"layer.0.a\": \"model-00001-of-00002.safetensors\","
        " \"layer.1.b\": \"model-00002-of-00002.safetensors\", \"layer.0.c\": \"model-00001-of-00002.safetensors\"}}");
    fclose(fp);
    SafetensorsSet* s = safetensors_set_open(sub, err, sizeof err);
    EXPECT(s != NULL, "set: %s", err);
    if (s) {
        EXPECT(s->n_files == 2 && s->n_tensors == 3, "2 shards, 3 tensors (%d, %d)", s->n_files, s->n_tensors);
        const SafetensorsFile* file = NULL;
        const SafetensorsEntry* e = safetensors_set_find(s, "layer.1.b", &file);
        float got[4];
        EXPECT(e && file && strstr(file->path, "00002-of"), "layer.1.b in shard 2");
        EXPECT(e && safetensors_read_f32(file, e, got, err, sizeof err) == 0 && got[0] == -1 && got[2] == -3,
               "layer.1.b values");
        e = safetensors_set_find(s, "layer.0.a", &file);
        EXPECT(e && file && strstr(file->path, "00001-of"), "layer.0.a in shard 1");
        EXPECT(e && safetensors_read_f32(file, e, got, err, sizeof err) == 0 && got[3] == 4, "layer.0.a values");
        EXPECT(safetensors_set_find(s, "layer.2.a", NULL) == NULL, "missing: NULL");
        safetensors_set_close(s);
    }

    /* an index that maps a tensor to a shard lacking it, or to a path outside the directory */
    fp = fopen(idx, "w");
    fprintf(fp, "{\"weight_map\": {\"layer.0.a\": \"model-00002-of-00002.safetensors\"}}");
    fclose(fp);
    EXPECT(safetensors_set_open(sub, err, sizeof err) == NULL, "wrong shard");
    EXPECT_MSG(err,
               "model.safetensors.index.json: tensor layer.0.a is mapped to model-00002-of-00002.safetensors, which "
               "does not hold it");
    fp = fopen(idx, "w");
    fprintf(fp, "{\"weight_map\": {\"layer.0.a\": \"../x.safetensors\"}}");
    fclose(fp);
    EXPECT(safetensors_set_open(sub, err, sizeof err) == NULL, "path outside");
    EXPECT_MSG(err, "not a file name in the directory");
    fp = fopen(idx, "w");
    fprintf(fp, "{\"weight_map\": [1]}");
    fclose(fp);
    EXPECT(safetensors_set_open(sub, err, sizeof err) == NULL, "bad index");
    EXPECT_MSG(err, "no \"weight_map\" object");
    /* a corrupted shard is named */
    fp = fopen(idx, "w");
    fprintf(fp, "{\"weight_map\": {\"layer.1.b\": \"model-00002-of-00002.safetensors\"}}");
    fclose(fp);
    EXPECT(truncate(p2, 4) == 0, "truncate");
    EXPECT(safetensors_set_open(sub, err, sizeof err) == NULL, "bad shard");
    EXPECT_MSG(err, "model-00002-of-00002.safetensors: 4 bytes, too short");

    /* model.safetensors wins over an index, as in transformers */
    char single[400];
    snprintf(single, sizeof single, "%s/model.safetensors", sub);
    EXPECT(safetensors_write_f32(single, s2, 1, 1, err, sizeof err) == 0, "single: %s", err);
    s = safetensors_set_open(sub, err, sizeof err);
    EXPECT(s && s->n_files == 1 && safetensors_set_find(s, "layer.1.b", NULL), "single file used: %s", err);
    safetensors_set_close(s);
}

int main(void) {
    snprintf(DIR_, sizeof DIR_, "/tmp/sapo_test_safetensors_XXXXXX");
    if (!mkdtemp(DIR_)) {
        perror("mkdtemp");
        return 1;
    }
    test_round_trip();
    test_half_payloads();
    test_corrupt();
    test_sharded();
    if (remove_tree(DIR_) != 0) printf("note: could not remove %s\n", DIR_);
    return test_finish("test_safetensors");
}
