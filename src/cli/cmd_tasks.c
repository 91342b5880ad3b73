/* `sapo tasks`: list the ReasoningGYM task ports and presets, generate entries as
 * reasoning_gym would, score JSONL entries from any source with the C verifiers, and measure
 * trivial policies. Entries are JSON lines {"question", "answer", "metadata"}. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/commands.h"
#include "core/check.h"
#include "tasks/infra/answer.h"
#include "tasks/infra/registry.h"
#include "tasks/infra/task_common.h"
#include "tasks/pyemu/pyjson.h"

#define ERRLEN 512

/* ---- small helpers ------------------------------------------------------------------- */

/* "name1, name2, ..." of the registered tasks, for error messages. */
static void known_tasks(char* buf, size_t n) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < task_count() && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", task_at(i)->name);
    if (task_count() == 0) snprintf(buf, n, "none in this build");
}

/* The spec for a name, or NULL with a message that tells unknown from not-yet-ported. */
static const TaskSpec* lookup_task(const char* name, char* err, size_t errlen) {
    const TaskSpec* spec = task_find(name);
    if (spec) return spec;
    char known[512];
    known_tasks(known, sizeof known);
    if (task_id(name) >= 0)
        set_error(err, errlen, "task '%s' is not ported in this build (available: %s)", name, known);
    else
        set_error(err, errlen, "unknown task '%s' (expected one of: %s)", name, known);
    return NULL;
}

static void print_json_line(FILE* out, const cJSON* obj) {
    char* text = cJSON_PrintUnformatted(obj);
    if (!text) sapo_die("out of memory printing JSON");
    fputs(text, out);
    fputc('\n', out);
    free(text);
}

/* ---- sapo tasks list ----------------------------------------------------------------- */

static const CliOption LIST_OPTIONS[] = {
    {"json", NULL, "one JSON object {\"tasks\": [{\"id\", \"name\", \"presets\": {...}}],\n"
                   "\"presets\": [...]} for programs"},
    {NULL, NULL, NULL},
};

static int tasks_list(int argc, char** argv) {
    CliArgs args;
    int parsed = cli_parse("tasks list", LIST_OPTIONS, argc, argv, &args);
    if (parsed == 0 && args.n_pos) parsed = cli_unexpected("tasks list", args.pos[0], "expected --json");
    int json = args.opt[0] != NULL;
    cli_args_free(&args);
    if (parsed > 0) {
        printf("usage: sapo tasks list [--json]\n"
               "Lists the ported tasks with their swarm id and each preset's reasoning_gym config.\n");
        cli_print_options(stdout, LIST_OPTIONS);
        return 0;
    }
    if (parsed < 0) return 2;
    if (json) {
        cJSON* root = cJSON_CreateObject();
        cJSON* presets = cJSON_AddArrayToObject(root, "presets");
        for (int p = 0; p < task_preset_count(); p++) cJSON_AddItemToArray(presets, cJSON_CreateString(task_preset_name(p)));
        cJSON* tasks = cJSON_AddArrayToObject(root, "tasks");
        for (int i = 0; i < task_count(); i++) {
            const TaskSpec* spec = task_at(i);
            cJSON* t = cJSON_CreateObject();
            cJSON_AddNumberToObject(t, "id", task_id(spec->name));
            cJSON_AddStringToObject(t, "name", spec->name);
            cJSON* cfgs = cJSON_AddObjectToObject(t, "presets");
            for (int p = 0; p < task_preset_count(); p++) {
                const char* text = task_preset_config(spec, task_preset_name(p));
                cJSON* cfg = text ? cJSON_Parse(text) : NULL;
                cJSON_AddItemToObject(cfgs, task_preset_name(p), cfg ? cfg : cJSON_CreateNull());
            }
            cJSON_AddItemToArray(tasks, t);
        }
        cJSON* missing = cJSON_AddArrayToObject(root, "not_ported");
        for (int id = 0; id < TASK_N_IDS; id++)
            if (!task_by_id(id)) cJSON_AddItemToArray(missing, cJSON_CreateString(task_id_name(id)));
        print_json_line(stdout, root);
        cJSON_Delete(root);
        return 0;
    }
    printf("# ReasoningGYM task ports (id = task id in swarm messages); presets: ");
    for (int p = 0; p < task_preset_count(); p++) printf("%s%s", p ? ", " : "", task_preset_name(p));
    printf("\n# %-3s %-24s %-6s %s\n", "id", "task", "preset", "config (reasoning_gym keys)");
    for (int i = 0; i < task_count(); i++) {
        const TaskSpec* spec = task_at(i);
        for (int p = 0; p < task_preset_count(); p++) {
            const char* text = task_preset_config(spec, task_preset_name(p));
            printf("  %-3d %-24s %-6s %s\n", task_id(spec->name), spec->name, task_preset_name(p),
                   text ? text : "(none)");
        }
    }
    for (int id = 0; id < TASK_N_IDS; id++)
        if (!task_by_id(id)) printf("# not ported in this build: id %d %s\n", id, task_id_name(id));
    return 0;
}

/* ---- sapo tasks gen ------------------------------------------------------------------ */

static const CliOption GEN_OPTIONS[] = {
    {"preset", "P", "paper (default), small or tiny"},
    {"seed", "S", "dataset seed (default 0)"},
    {"count", "N", "number of entries (default 10)"},
    {"start", "I", "first index (default 0)"},
    {"config", "JSON", "object of reasoning_gym config keys laid over the preset"},
    {NULL, NULL, NULL},
};
enum { GEN_PRESET, GEN_SEED, GEN_COUNT, GEN_START, GEN_CONFIG };

static int tasks_gen(int argc, char** argv) {
    CliArgs args;
    int parsed = cli_parse("tasks gen", GEN_OPTIONS, argc, argv, &args);
    if (parsed == 0 && args.n_pos > 1) parsed = cli_unexpected("tasks gen", args.pos[1], "one TASK only");
    const char* task = args.n_pos ? args.pos[0] : NULL;
    const char* preset = args.opt[GEN_PRESET] ? args.opt[GEN_PRESET] : "paper";
    const char* config_text = args.opt[GEN_CONFIG];
    long long seed = 0, count = 10, start = 0;
    if (parsed == 0 && (cli_opt_ll(&args, GEN_SEED, INT64_MIN, INT64_MAX, &seed) ||
                        cli_opt_ll(&args, GEN_COUNT, 0, INT64_MAX, &count) ||
                        cli_opt_ll(&args, GEN_START, 0, INT64_MAX, &start)))
        parsed = -1;
    cli_args_free(&args);
    if (parsed > 0) {
        printf("usage: sapo tasks gen TASK [--preset P] [--seed S] [--count N] [--start I] [--config JSON]\n"
               "Writes N entries as JSON lines {\"question\", \"answer\", \"metadata\"}: entry i (I <= i < I+N)\n"
               "is reasoning_gym.create_dataset(TASK, seed=S, **config)[i], made with Python's\n"
               "random.Random(S + i). \"answer\" is null where the package stores None.\n");
        cli_print_options(stdout, GEN_OPTIONS);
        return 0;
    }
    if (parsed < 0) return 2;
    char err[ERRLEN];
    if (!task) {
        known_tasks(err, sizeof err);
        fprintf(stderr, "sapo tasks gen: missing TASK (one of: %s)\n", err);
        return 2;
    }
    /* reasoning_gym seeds item i with seed + i; keep that sum inside int64. */
    if (start > INT64_MAX - count || (seed > 0 && start + count > INT64_MAX - seed)) {
        fprintf(stderr, "sapo tasks gen: seed + start + count overflows a 64-bit integer\n");
        return 2;
    }
    const TaskSpec* spec = lookup_task(task, err, sizeof err);
    if (!spec) {
        fprintf(stderr, "sapo tasks gen: %s\n", err);
        return 2;
    }
    cJSON* overrides = NULL;
    if (config_text) {
        overrides = cJSON_Parse(config_text);
        if (!cJSON_IsObject(overrides)) {
            fprintf(stderr, "sapo tasks gen: --config must be a JSON object, got: %s\n", config_text);
            cJSON_Delete(overrides);
            return 2;
        }
    }
    cJSON* cfg = task_config_build(spec, preset, overrides, err, sizeof err);
    cJSON_Delete(overrides);
    if (!cfg) {
        fprintf(stderr, "sapo tasks gen: %s\n", err);
        return 2;
    }
    int rc = 0;
    for (long long i = start; i < start + count; i++) {
        cJSON* entry = task_generate_entry(spec, cfg, seed, i, err, sizeof err);
        if (!entry) {
            fprintf(stderr, "sapo tasks gen: %s\n", err);
            rc = 1;
            break;
        }
        print_json_line(stdout, entry);
        cJSON_Delete(entry);
    }
    cJSON_Delete(cfg);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "sapo tasks gen: write error on stdout\n");
        return 1;
    }
    return rc;
}

/* ---- sapo tasks score ---------------------------------------------------------------- */

/* Scores one parsed line; returns 0 with *score set, or -1 with the reason in err. */
static int score_line(const cJSON* line, double* score, char* err, size_t errlen) {
    if (!cJSON_IsObject(line)) return set_error(err, errlen, "expected a JSON object, got another JSON value");
    const cJSON* entry = cJSON_GetObjectItemCaseSensitive(line, "entry");
    if (!entry) return set_error(err, errlen, "missing field \"entry\" (an object {\"question\", \"answer\", \"metadata\"})");
    if (!cJSON_IsObject(entry)) return set_error(err, errlen, "field \"entry\" must be an object {\"question\", \"answer\", \"metadata\"}");
    const cJSON* oracle = cJSON_GetObjectItemCaseSensitive(entry, "answer");
    if (!oracle) return set_error(err, errlen, "missing field \"entry.answer\" (a string, or null where reasoning_gym has None)");
    if (!cJSON_IsString(oracle) && !cJSON_IsNull(oracle))
        return set_error(err, errlen, "field \"entry.answer\" must be a string or null");
    const cJSON* metadata = cJSON_GetObjectItemCaseSensitive(entry, "metadata");
    if (!metadata) return set_error(err, errlen, "missing field \"entry.metadata\" (an object)");
    if (!cJSON_IsObject(metadata)) return set_error(err, errlen, "field \"entry.metadata\" must be an object");

    const cJSON* task = cJSON_GetObjectItemCaseSensitive(line, "task");
    const char* name = NULL;
    size_t name_len = 0;
    if (task) {
        if (!cJSON_IsString(task)) return set_error(err, errlen, "field \"task\" must be a string (a task name)");
        name = pyjson_string(task, &name_len);
    } else {
        const cJSON* src = cJSON_GetObjectItemCaseSensitive(metadata, "source_dataset");
        if (!cJSON_IsString(src))
            return set_error(err, errlen, "missing field \"task\" (and no entry.metadata.source_dataset to fall back on)");
        name = pyjson_string(src, &name_len);
    }
    if (strlen(name) != name_len) {
        char known[512];
        known_tasks(known, sizeof known);
        return set_error(err, errlen, "unknown task '%s\\u0000...' (expected one of: %s)", name, known);
    }
    const TaskSpec* spec = lookup_task(name, err, errlen);
    if (!spec) return -1;

    const cJSON* completion = cJSON_GetObjectItemCaseSensitive(line, "completion");
    const cJSON* answer = cJSON_GetObjectItemCaseSensitive(line, "answer");
    if (completion && answer)
        return set_error(err, errlen, "give either \"completion\" (text to extract the answer from) or \"answer\", not both");
    size_t len = 0;
    if (completion) {
        if (!cJSON_IsString(completion)) return set_error(err, errlen, "field \"completion\" must be a string");
        const char* text = pyjson_string(completion, &len);
        *score = task_reward_n(spec, text, len, entry);
        return 0;
    }
    if (answer) {
        if (!cJSON_IsString(answer) && !cJSON_IsNull(answer))
            return set_error(err, errlen, "field \"answer\" must be a string or null");
        const char* text = pyjson_string(answer, &len); /* NULL for null: Python None */
        *score = spec->score(text, len, entry);
        return 0;
    }
    return set_error(err, errlen, "missing field \"completion\" or \"answer\" (what to score)");
}

static int blank(const char* s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

#define SCORE_DEFAULT_MAX_LINE ((size_t)1 << 20)
#define SCORE_MAX_MAX_LINE ((size_t)1 << 30)

typedef enum { LINE_EOF, LINE_OK, LINE_TOO_LONG, LINE_READ_ERROR } LineStatus;

/* Reads one line, without its '\n', into *buf (grown up to max bytes, not terminated): a
 * longer line is read on to its end and dropped, so memory stays within the limit. */
static LineStatus score_read_line(FILE* in, char** buf, size_t* cap, size_t max, size_t* len) {
    size_t n = 0;
    int c, any = 0, too_long = 0;
    while ((c = getc_unlocked(in)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (too_long) continue;
        if (n == max) {
            too_long = 1;
            continue;
        }
        if (n == *cap) {
            size_t grown = *cap ? 2 * *cap : 4096;
            if (grown > max) grown = max;
            char* p = realloc(*buf, grown);
            if (!p) sapo_die("out of memory reading a line of %zu bytes", grown);
            *buf = p;
            *cap = grown;
        }
        (*buf)[n++] = (char)c;
    }
    *len = n;
    if (ferror(in)) return LINE_READ_ERROR;
    if (!any) return LINE_EOF;
    return too_long ? LINE_TOO_LONG : LINE_OK;
}

static const CliOption SCORE_OPTIONS[] = {
    {"max-line-bytes", "N", "a longer line (without its newline) is an error, read past\n"
                            "and not parsed (default 1048576, at most 1073741824)"},
    {NULL, NULL, NULL},
};

static int tasks_score(int argc, char** argv) {
    CliArgs args;
    int parsed = cli_parse("tasks score", SCORE_OPTIONS, argc, argv, &args);
    if (parsed == 0 && args.n_pos > 1) {
        fprintf(stderr, "sapo tasks score: one input FILE only (got '%s' and '%s')\n", args.pos[0], args.pos[1]);
        parsed = -1;
    }
    const char* path = args.n_pos ? args.pos[0] : NULL;
    long long max_line_arg = (long long)SCORE_DEFAULT_MAX_LINE;
    if (parsed == 0 && cli_opt_ll(&args, 0, 1, (long long)SCORE_MAX_MAX_LINE, &max_line_arg)) parsed = -1;
    cli_args_free(&args);
    if (parsed > 0) {
        printf("usage: sapo tasks score [--max-line-bytes N] [FILE|-]\n"
               "Reads JSON lines (FILE, or stdin when absent or -), each\n"
               "  {\"task\": NAME, \"entry\": {\"question\", \"answer\", \"metadata\"}, \"completion\": TEXT}\n"
               "or the same with \"answer\": TEXT|null in place of \"completion\". A completion is reduced to\n"
               "its last <answer>...</answer> (stripped) as rl-swarm does and scored; no answer scores 0.\n"
               "With \"answer\" the verifier scores that text directly (null is Python None).\n"
               "\"task\" may be left out when entry.metadata.source_dataset names the task.\n"
               "A line is read as Python's json.loads(line.decode(\"utf-8\")) reads it: invalid UTF-8 and\n"
               "anything Python's json refuses are errors; \\u0000 inside a string is kept; a lone\n"
               "surrogate escape other than \\udc80-\\udcff is an error (docs/TASKS.md has the rules).\n"
               "Writes one JSON line per non-blank input line: {\"line\": N, \"score\": X} (X printed with\n"
               "17 significant digits) or {\"line\": N, \"error\": WHY}. Every good line is scored; the exit\n"
               "status is 1 when any line had an error (each also reported on stderr), else 0.\n");
        cli_print_options(stdout, SCORE_OPTIONS);
        return 0;
    }
    if (parsed < 0) return 2;
    size_t max_line = (size_t)max_line_arg;
    FILE* in = stdin;
    const char* label = "<stdin>";
    if (path && strcmp(path, "-") != 0) {
        in = fopen(path, "rb");
        if (!in) {
            fprintf(stderr, "sapo tasks score: cannot open '%s': %s\n", path, strerror(errno));
            return 2;
        }
        label = path;
    }
    char* buf = NULL;
    size_t cap = 0, n;
    long long lineno = 0, n_err = 0, n_ok = 0;
    char err[ERRLEN];
    LineStatus st;
    while ((st = score_read_line(in, &buf, &cap, max_line, &n)) == LINE_OK || st == LINE_TOO_LONG) {
        lineno++;
        double score = 0.0;
        int rc;
        if (st == LINE_TOO_LONG) {
            rc = set_error(err, sizeof err, "line longer than %zu bytes (--max-line-bytes): not parsed", max_line);
        } else {
            if (blank(buf, n)) continue;
            cJSON* obj = pyjson_parse(buf, n, err, sizeof err);
            rc = obj ? score_line(obj, &score, err, sizeof err) : -1;
            cJSON_Delete(obj);
        }
        if (rc == 0 && !isfinite(score)) rc = set_error(err, sizeof err, "verifier returned a non-finite score");
        if (rc == 0) {
            printf("{\"line\":%lld,\"score\":%.17g}\n", lineno, score);
            n_ok++;
        } else {
            cJSON* e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "line", (double)lineno);
            cJSON_AddStringToObject(e, "error", err);
            print_json_line(stdout, e);
            cJSON_Delete(e);
            fprintf(stderr, "sapo tasks score: %s:%lld: %s\n", label, lineno, err);
            n_err++;
        }
    }
    free(buf);
    if (in != stdin) fclose(in);
    if (st == LINE_READ_ERROR) {
        /* The line being read is incomplete: it is neither scored nor reported as a line. */
        fprintf(stderr, "sapo tasks score: read error on %s after line %lld\n", label, lineno);
        return 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "sapo tasks score: write error on stdout\n");
        return 1;
    }
    if (n_err) {
        fprintf(stderr, "sapo tasks score: %lld of %lld lines had errors (%lld scored)\n", n_err, n_err + n_ok, n_ok);
        return 1;
    }
    return 0;
}

/* ---- sapo tasks baseline ------------------------------------------------------------- */

typedef enum { POL_NONE, POL_CONST, POL_COPY, POL_LAST_TOKEN, POL_ORACLE } BaselineGuessKind;
typedef struct {
    const char* label;
    BaselineGuessKind kind;
    const char* text; /* POL_CONST */
} BaselineGuess;

static const BaselineGuess POLICIES[] = {
    {"no answer tag", POL_NONE, NULL},
    {"\"\"", POL_CONST, ""},
    {"\"0\"", POL_CONST, "0"},
    {"\"1\"", POL_CONST, "1"},
    {"\"True\"", POL_CONST, "True"},
    {"\"False\"", POL_CONST, "False"},
    {"copy question", POL_COPY, NULL},
    {"last token", POL_LAST_TOKEN, NULL},
    {"oracle", POL_ORACLE, NULL},
};
#define N_POLICIES ((int)(sizeof POLICIES / sizeof POLICIES[0]))

/* The answer a policy gives for an entry: NULL means no extractable answer (None). Returns a
 * heap string or NULL. */
static char* policy_answer(const BaselineGuess* p, const cJSON* entry) {
    const char* q = task_entry_question(entry, NULL);
    const char* a = task_entry_answer(entry, NULL);
    switch (p->kind) {
    case POL_NONE: return NULL;
    case POL_CONST: return strdup(p->text);
    case POL_COPY: return q ? strdup(q) : NULL;
    case POL_ORACLE: {
        /* propositional_logic stores None; its metadata carries one valid conclusion. */
        if (a) return strdup(a);
        const cJSON* md = task_entry_metadata(entry);
        const cJSON* ex = md ? cJSON_GetObjectItemCaseSensitive(md, "example_answer") : NULL;
        return cJSON_IsString(ex) ? strdup(ex->valuestring) : NULL;
    }
    case POL_LAST_TOKEN: {
        if (!q) return NULL;
        size_t end = strlen(q);
        while (end > 0 && (q[end - 1] == ' ' || q[end - 1] == '\n' || q[end - 1] == '\t' || q[end - 1] == '\r')) end--;
        size_t begin = end;
        while (begin > 0 && q[begin - 1] != ' ' && q[begin - 1] != '\n' && q[begin - 1] != '\t' && q[begin - 1] != '\r')
            begin--;
        return strndup(q + begin, end - begin);
    }
    }
    return NULL;
}

static const CliOption BASELINE_OPTIONS[] = {
    {"preset", "P", "paper (default), small or tiny"},
    {"count", "N", "entries per task, 1 to 1000000 (default 200)"},
    {"seed", "S", "dataset seed, >= 0 (default 0)"},
    {NULL, NULL, NULL},
};
enum { BASE_PRESET, BASE_COUNT, BASE_SEED };

static int tasks_baseline(int argc, char** argv) {
    CliArgs args;
    int parsed = cli_parse("tasks baseline", BASELINE_OPTIONS, argc, argv, &args);
    if (parsed == 0 && args.n_pos) parsed = cli_unexpected("tasks baseline", args.pos[0], "see --help");
    const char* preset = args.opt[BASE_PRESET] ? args.opt[BASE_PRESET] : "paper";
    long long count = 200, seed = 0;
    if (parsed == 0 &&
        (cli_opt_ll(&args, BASE_COUNT, 1, 1000000, &count) || cli_opt_ll(&args, BASE_SEED, 0, INT64_MAX, &seed)))
        parsed = -1;
    cli_args_free(&args);
    if (parsed > 0) {
        printf("usage: sapo tasks baseline [--preset P] [--count N] [--seed S]\n"
               "Mean verifier score of trivial policies on N entries per task (seed S, preset P; defaults\n"
               "paper, 200, 0), as a markdown table. Each policy's text is the extracted answer, i.e. the\n"
               "completion \"<answer>TEXT</answer>\"; \"no answer tag\" is a completion with none (reward 0).\n"
               "\"copy question\" answers with the whole question, \"last token\" with its last\n"
               "whitespace-separated token, \"oracle\" with the stored answer, or metadata.example_answer\n"
               "where the package stores None (a sanity check; below 1 only where the package's own\n"
               "oracle scores below 1, e.g. base_conversion's empty answer for the value 0).\n");
        cli_print_options(stdout, BASELINE_OPTIONS);
        return 0;
    }
    if (parsed < 0) return 2;
    if (!task_preset_known(preset)) {
        fprintf(stderr, "sapo tasks baseline: unknown preset '%s' (expected paper, small or tiny)\n", preset);
        return 2;
    }
    if (count < 1 || count > 1000000 || seed < 0 || seed > INT64_MAX - count) {
        fprintf(stderr, "sapo tasks baseline: need 1 <= --count <= 1000000 and 0 <= --seed (seed + count in int64)\n");
        return 2;
    }
    printf("<!-- sapo tasks baseline --preset %s --count %lld --seed %lld -->\n", preset, (long long)count,
           (long long)seed);
    printf("| task |");
    for (int p = 0; p < N_POLICIES; p++) printf(" %s |", POLICIES[p].label);
    printf("\n|---|");
    for (int p = 0; p < N_POLICIES; p++) printf("---:|");
    printf("\n");
    int rc = 0;
    char err[ERRLEN];
    for (int t = 0; t < task_count(); t++) {
        const TaskSpec* spec = task_at(t);
        cJSON* cfg = task_config_build(spec, preset, NULL, err, sizeof err);
        if (!cfg) {
            fprintf(stderr, "sapo tasks baseline: %s\n", err);
            rc = 1;
            continue;
        }
        double sum[N_POLICIES] = {0};
        int64_t n = 0;
        for (int64_t i = 0; i < count; i++) {
            cJSON* entry = task_generate_entry(spec, cfg, seed, i, err, sizeof err);
            if (!entry) {
                fprintf(stderr, "sapo tasks baseline: %s\n", err);
                rc = 1;
                break;
            }
            for (int p = 0; p < N_POLICIES; p++) {
                char* ans = policy_answer(&POLICIES[p], entry);
                sum[p] += ans ? spec->score(ans, strlen(ans), entry) : 0.0; /* no answer: reward 0 */
                free(ans);
            }
            n++;
            cJSON_Delete(entry);
        }
        cJSON_Delete(cfg);
        printf("| %s |", spec->name);
        for (int p = 0; p < N_POLICIES; p++) printf(" %.4f |", n ? sum[p] / (double)n : 0.0);
        printf("\n");
    }
    return rc;
}

/* ---- dispatch ------------------------------------------------------------------------ */

static void tasks_usage(FILE* out) {
    fprintf(out, "usage: sapo tasks list|gen|score|baseline [ARGS...]\n"
                 "The nine ReasoningGYM tasks (generators and verifiers matching reasoning_gym 0.1.25).\n"
                 "  list       tasks, their swarm ids and each preset's config\n"
                 "  gen        entries {question, answer, metadata} as JSON lines\n"
                 "  score      score JSON lines {task, entry, completion|answer} with the C verifiers\n"
                 "  baseline   mean score of trivial policies per task, as a markdown table\n"
                 "`sapo tasks SUBCOMMAND --help` tells more about each.\n");
}

int cmd_tasks(int argc, char** argv) {
    if (argc < 2) {
        tasks_usage(stderr);
        return 2;
    }
    const char* sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
        tasks_usage(stdout);
        return 0;
    }
    if (!strcmp(sub, "list")) return tasks_list(argc - 1, argv + 1);
    if (!strcmp(sub, "gen")) return tasks_gen(argc - 1, argv + 1);
    if (!strcmp(sub, "score")) return tasks_score(argc - 1, argv + 1);
    if (!strcmp(sub, "baseline")) return tasks_baseline(argc - 1, argv + 1);
    fprintf(stderr, "sapo tasks: unknown subcommand '%s' (expected list, gen, score or baseline)\n", sub);
    return 2;
}
