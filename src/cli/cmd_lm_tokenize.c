/* `sapo lm tokenize`: JSON lines of text to JSON lines of token ids with a tokenizer.json
 * (or, with --decode, ids back to text), equal to what the `tokenizers` library gives:
 * Tokenizer.from_file(F).encode(text).ids and .decode(ids, skip_special_tokens=False).
 * What model/text/bpe_tokenizer.h supports is what this reads. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli/commands.h"
#include "core/check.h"
#include "model/tokenizer.h"
#include "tasks/pyemu/pyjson.h"

#define ERRLEN 512
#define CMD "lm tokenize"

static const CliOption OPTIONS[] = {
    {"tokenizer", "FILE", "a Hugging Face tokenizer.json (or the folder holding one)"},
    {"decode", NULL, "read JSON arrays of ids and write JSON strings of their text"},
    {NULL, NULL, NULL},
};
enum { OPT_TOKENIZER, OPT_DECODE };

static void usage(FILE* out) {
    fprintf(out, "usage: sapo lm tokenize --tokenizer FILE [--decode] [FILE|-]\n"
                 "Reads JSON lines (FILE, or stdin when absent or -): each line one JSON string, the text;\n"
                 "writes for each one line, the JSON array of its token ids, as the `tokenizers` library's\n"
                 "Tokenizer.from_file(FILE).encode(text).ids gives them (no tokens are added around the text).\n"
                 "With --decode each line is a JSON array of ids and each output line the JSON string of\n"
                 "their text, as decode(ids, skip_special_tokens=False): special tokens as their text,\n"
                 "bytes that end inside a character as U+FFFD, ids the file does not define skipped.\n"
                 "Lines are read as Python's json.loads reads them (\\u0000 is kept).\n");
    cli_print_options(out, OPTIONS);
    fprintf(out, "Exit 0, or 2 on bad input: one line on stderr naming the input line and what was wrong,\n"
                 "after the output of the lines before it.\n");
}

/* s[0..n) as a JSON string literal: UTF-8 passed through; controls, and the line and
 * paragraph separators U+2028 and U+2029 (line breaks to some readers), escaped. */
static void print_json_string(FILE* out, const char* s, size_t n) {
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (c < 0x20) fprintf(out, "\\u%04x", c);
            else if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                     ((unsigned char)s[i + 2] & 0xFE) == 0xA8) {
                fprintf(out, "\\u%04x", 0x2028 + ((unsigned char)s[i + 2] & 1));
                i += 2;
            } else fputc(c, out);
        }
    }
    fputs("\"\n", out);
}

/* One input line: its output line, or -1 with the reason in err. */
static int tokenize_line(const Tokenizer* tok, int decode, const char* line, size_t len, char* err, size_t errlen) {
    cJSON* v = pyjson_parse(line, len, err, errlen);
    if (!v) return -1;
    int rc = 0;
    if (!decode) {
        size_t n = 0;
        const char* text = pyjson_string(v, &n);
        int* ids = NULL;
        int n_ids = 0;
        if (!text) rc = set_error(err, errlen, "expected a JSON string");
        else rc = tokenizer_encode(tok, text, n, &ids, &n_ids, err, errlen);
        if (rc == 0) {
            putchar('[');
            for (int i = 0; i < n_ids; i++) printf(i ? ",%d" : "%d", ids[i]);
            fputs("]\n", stdout);
        }
        free(ids);
    } else if (!cJSON_IsArray(v)) {
        rc = set_error(err, errlen, "expected a JSON array of token ids");
    } else {
        int n = cJSON_GetArraySize(v), k = 0;
        int* ids = mallocCheck(((size_t)n + 1) * sizeof *ids);
        const cJSON* e;
        cJSON_ArrayForEach(e, v) {
            double d = cJSON_IsNumber(e) ? e->valuedouble : -1.0;
            if (d < 0 || d > 4294967295.0 || d != (double)(long long)d) {
                rc = set_error(err, errlen, "element %d: expected a token id (an integer in [0, 2^32))", k);
                break;
            }
            /* An id above INT_MAX is no id of any file: skipped, as the library skips unknown ids. */
            ids[k++] = d > INT_MAX ? -1 : (int)d;
        }
        if (rc == 0) {
            size_t tl = 0;
            char* text = tokenizer_decode_n(tok, ids, k, &tl);
            print_json_string(stdout, text, tl);
            free(text);
        }
        free(ids);
    }
    cJSON_Delete(v);
    return rc;
}

int cmd_lm_tokenize(int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse(CMD, OPTIONS, argc, argv, &a);
    if (parsed == 0 && a.n_pos > 1) parsed = cli_unexpected(CMD, a.pos[1], "one input FILE only");
    const char* tok_path = a.opt[OPT_TOKENIZER];
    int decode = a.opt[OPT_DECODE] != NULL;
    const char* in_path = a.n_pos ? a.pos[0] : NULL;
    if (parsed > 0) {
        cli_args_free(&a);
        usage(stdout);
        return 0;
    }
    if (parsed == 0 && !tok_path) {
        fprintf(stderr, "sapo " CMD ": --tokenizer FILE is required (see `sapo " CMD " --help`)\n");
        parsed = -1;
    }
    if (parsed < 0) {
        cli_args_free(&a);
        return 2;
    }
    char path[4096];
    struct stat st;
    if (stat(tok_path, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(path, sizeof path, "%s/tokenizer.json", tok_path);
    else snprintf(path, sizeof path, "%s", tok_path);
    FILE* in = stdin;
    if (in_path && strcmp(in_path, "-") != 0) {
        in = fopen(in_path, "rb");
        if (!in) {
            fprintf(stderr, "sapo " CMD ": cannot open '%s': %s\n", in_path, strerror(errno));
            cli_args_free(&a);
            return 2;
        }
    }
    cli_args_free(&a);
    char err[ERRLEN];
    Tokenizer* tok = tokenizer_load(path, err, sizeof err);
    if (!tok) {
        fprintf(stderr, "sapo " CMD ": %s\n", err);
        if (in != stdin) fclose(in);
        return 2;
    }
    char* line = NULL;
    size_t cap = 0;
    ssize_t got;
    long long lineno = 0;
    int rc = 0;
    while ((got = getline(&line, &cap, in)) >= 0) {
        lineno++;
        size_t n = (size_t)got;
        if (n && line[n - 1] == '\n') n--;
        if (tokenize_line(tok, decode, line, n, err, sizeof err)) {
            fflush(stdout);
            fprintf(stderr, "sapo " CMD ": line %lld: %s\n", lineno, err);
            rc = 2;
            break;
        }
    }
    if (rc == 0 && ferror(in)) {
        fprintf(stderr, "sapo " CMD ": read error after line %lld\n", lineno);
        rc = 2;
    }
    free(line);
    if (in != stdin) fclose(in);
    tokenizer_free(tok);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "sapo " CMD ": write error on stdout\n");
        return rc ? rc : 1;
    }
    return rc;
}
