/* Unit test of the configuration system (src/core/config.c): defaults, INI loading, base
 * includes, [node.K] and command-line overrides, round trip through config_write, and
 * every error path with the text of its message. Fixture files go to a mkdtemp directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/config_enums.h"
#include "io/files.h"

static int n_checks, n_failed;
static char tmpdir[256];

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        n_checks++;                                                           \
        if (!(cond)) {                                                        \
            n_failed++;                                                       \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
        }                                                                     \
    } while (0)

/* Writes a fixture under the temp directory and returns its full path (static buffer
 * rotation: callers copy when they need it long). */
static const char* fixture(const char* rel, const char* text) {
    static char paths[8][512];
    static int next;
    char* path = paths[next++ % 8];
    snprintf(path, 512, "%s/%s", tmpdir, rel);
    for (char* p = path + strlen(tmpdir) + 1; *p; p++) { /* make parent folders */
        if (*p != '/') continue;
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write fixture %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

/* Every substring (NULL-terminated list) must occur in msg. */
static int contains_all(const char* msg, va_list ap) {
    int ok = 1;
    for (const char* s = va_arg(ap, const char*); s; s = va_arg(ap, const char*)) {
        if (!strstr(msg, s)) {
            fprintf(stderr, "    missing '%s'\n", s);
            ok = 0;
        }
    }
    return ok;
}

/* Loading text (as file rel) into a fresh config must fail with a message holding every
 * given substring; "@" in a substring stands for the fixture's full path. */
static void expect_file_error(int line, const char* rel, const char* text, ...) {
    const char* path = fixture(rel, text);
    Config* cfg = config_new();
    char err[2048] = "";
    int rc = config_load_file(cfg, path, err, sizeof err);
    if (rc == 0) rc = config_validate(cfg, err, sizeof err) == 0 ? 0 : -2;
    n_checks++;
    va_list ap;
    va_start(ap, text);
    int ok = rc != 0 && contains_all(err, ap);
    va_end(ap);
    if (!ok) {
        n_failed++;
        fprintf(stderr, "FAIL %s:%d: loading %s: rc %d, message: %s\n", __FILE__, line, rel, rc, err);
    } else {
        printf("  ok  %s\n", err);
    }
    config_free(cfg);
}
#define EXPECT_FILE_ERROR(rel, text, ...) expect_file_error(__LINE__, rel, text, __VA_ARGS__, (const char*)NULL)

static void expect_override_error(int line, const char* assignment, ...) {
    Config* cfg = config_new();
    char err[2048] = "";
    int rc = config_set_override(cfg, assignment, err, sizeof err);
    n_checks++;
    va_list ap;
    va_start(ap, assignment);
    int ok = rc != 0 && contains_all(err, ap);
    va_end(ap);
    if (!ok) {
        n_failed++;
        fprintf(stderr, "FAIL %s:%d: override '%s': rc %d, message: %s\n", __FILE__, line, assignment, rc, err);
    } else {
        printf("  ok  %s\n", err);
    }
    config_free(cfg);
}
#define EXPECT_OVERRIDE_ERROR(a, ...) expect_override_error(__LINE__, a, __VA_ARGS__, (const char*)NULL)

static Config* load_ok(const char* path) {
    Config* cfg = config_new();
    char err[2048] = "";
    int rc = config_load_file(cfg, path, err, sizeof err);
    CHECK(rc == 0, "loading %s: %s", path, err);
    return cfg;
}

static void override_ok(Config* cfg, const char* assignment) {
    char err[2048] = "";
    CHECK(config_set_override(cfg, assignment, err, sizeof err) == 0, "override %s: %s", assignment, err);
}

/* ---- defaults and the schema itself ---------------------------------------------------- */

static void test_defaults(void) {
    Config* cfg = config_new();
    CHECK(config_int(cfg, "model.n_layer") == 2, "n_layer %ld", config_int(cfg, "model.n_layer"));
    CHECK(config_int(cfg, "model.n_head") == 4, "n_head");
    CHECK(config_int(cfg, "model.d_model") == 64, "d_model");
    CHECK(config_int(cfg, "model.n_ctx") == 128, "n_ctx");
    CHECK(!strcmp(config_string(cfg, "model.backend"), "cpu"), "backend %s", config_string(cfg, "model.backend"));
    CHECK(!strcmp(config_string(cfg, "model.init"), ""), "init");
    CHECK(config_int(cfg, "model.init_seed") == 1337, "init_seed");
    CHECK(config_float(cfg, "optim.lr") == 3e-4, "lr %.17g", config_float(cfg, "optim.lr"));
    CHECK(config_float(cfg, "optim.beta1") == 0.9, "beta1");
    CHECK(config_float(cfg, "optim.beta2") == 0.999, "beta2");
    CHECK(config_float(cfg, "optim.eps") == 1e-8, "eps");
    CHECK(config_float(cfg, "optim.weight_decay") == 0, "wd");
    CHECK(config_float(cfg, "optim.grad_clip") == 1.0, "grad_clip");
    CHECK(config_float(cfg, "gen.temperature") == 1.0, "temperature");
    CHECK(config_float(cfg, "gen.top_p") == 1.0, "top_p");
    CHECK(config_int(cfg, "gen.max_new_tokens") == 48, "max_new_tokens");
    CHECK(config_int(cfg, "swarm.seed") == 42, "seed");
    CHECK(config_int(cfg, "swarm.rounds") == 100, "rounds");
    CHECK(config_int(cfg, "swarm.nodes") == 8, "nodes");
    CHECK(config_int(cfg, "sampling.local") == 8, "local");
    CHECK(config_int(cfg, "sampling.external") == 0, "external");
    CHECK(!strcmp(config_string(cfg, "sampling.filter"), "zero_adv"), "filter");
    CHECK(config_int(cfg, "grpo.completions") == 8, "completions");
    CHECK(config_int(cfg, "grpo.ppo_epochs") == 1, "ppo_epochs");
    CHECK(config_float(cfg, "grpo.eps_low") == 0.2, "eps_low");
    CHECK(config_float(cfg, "grpo.eps_high") == 0.28, "eps_high");
    CHECK(config_float(cfg, "grpo.kl") == 0, "kl");
    CHECK(!strcmp(config_string(cfg, "net.transport"), "p2p"), "transport");
    CHECK(!strcmp(config_string(cfg, "net.clock"), "virtual"), "clock");
    CHECK(config_float(cfg, "net.latency") == 0 && config_float(cfg, "net.drop") == 0, "net");
    CHECK(!strcmp(config_string(cfg, "tasks.preset"), "small"), "preset");
    CHECK(!strcmp(config_string(cfg, "tasks.names"), "all"), "names");
    CHECK(!strcmp(config_string(cfg, "run.out"), "") && !strcmp(config_string(cfg, "run.name"), ""), "run");
    CHECK(config_int(cfg, "run.eval_every") == 20 && config_int(cfg, "run.eval_questions") == 256 &&
              config_int(cfg, "run.eval_seed") == 1, "eval");
    CHECK(config_int(cfg, "run.log_every") == 1, "log_every");
    CHECK(config_bool(cfg, "run.resume") == 0, "resume");
    CHECK(!strcmp(config_origin(cfg, "model.n_layer"), "default"), "origin %s", config_origin(cfg, "model.n_layer"));
    CHECK(config_max_node(cfg) == -1, "no node overrides");
    CHECK(config_node_int(cfg, 3, "model.n_layer") == 2, "node falls back to global");
    char err[512] = "";
    CHECK(config_validate(cfg, err, sizeof err) == 0, "defaults validate: %s", err);
    CHECK(config_field("grpo.lr") == NULL, "no grpo.lr: the learning rate is optim.lr only");

    /* Schema sanity: unique "section.key" names, per-node flags as the brief lists. */
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const char* k = CONFIG_SCHEMA[i].key;
        CHECK(strchr(k, '.') && strchr(k, '.') == strrchr(k, '.'), "key %s is section.key", k);
        CHECK(CONFIG_SCHEMA[i].help && *CONFIG_SCHEMA[i].help, "key %s has help", k);
        for (int j = 0; j < i; j++) CHECK(strcmp(k, CONFIG_SCHEMA[j].key), "duplicate schema key %s", k);
    }
    const char* per_node[] = {"model.n_layer", "model.n_head", "model.d_model", "model.n_ctx", "model.family", "model.hf_dir", "model.backend",
                              "model.init", "model.micro_tokens", "model.deterministic", "optim.lr", "optim.grad_clip", "gen.temperature", "gen.top_p",
                              "gen.max_new_tokens", "grpo.external", "grpo.local", "grpo.frozen", "sampling.local", "sampling.external", "grpo.completions",
                              "sampling.groups", "net.fault", "net.slowdown", "run.specialty"};
    int n_per_node = 0;
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) n_per_node += CONFIG_SCHEMA[i].per_node;
    CHECK(n_per_node == (int)(sizeof per_node / sizeof *per_node), "%d per-node keys", n_per_node);
    for (size_t i = 0; i < sizeof per_node / sizeof *per_node; i++)
        CHECK(config_field(per_node[i]) && config_field(per_node[i])->per_node, "%s per node", per_node[i]);
    config_free(cfg);
}

/* ---- loading -------------------------------------------------------------------------------- */

static void test_file_and_overrides(void) {
    const char* path = fixture("exp/load.ini",
                               "# a comment\n"
                               "[model]\n"
                               "n_layer = 4\n"
                               "  n_head=2 ; indented, inline comment\n"
                               "backend = auto\n"
                               "init = ckpt/a;b.bin\n"
                               "[optim]\n"
                               "lr = 1e-3\n"
                               "beta1 = 0\n"
                               "[gen]\n"
                               "top_p = 0.95\n"
                               "[run]\n"
                               "resume = YES\n"
                               "name =\n"
                               "[model]\n"
                               "n_ctx = 256\n");
    char origin[600];
    Config* cfg = load_ok(path);
    CHECK(config_int(cfg, "model.n_layer") == 4, "n_layer %ld", config_int(cfg, "model.n_layer"));
    CHECK(config_int(cfg, "model.n_head") == 2, "n_head");
    CHECK(!strcmp(config_string(cfg, "model.backend"), "auto"), "backend");
    CHECK(!strcmp(config_string(cfg, "model.init"), "ckpt/a;b.bin"), "init '%s'", config_string(cfg, "model.init"));
    CHECK(config_float(cfg, "optim.lr") == 1e-3, "lr");
    CHECK(config_float(cfg, "optim.beta1") == 0, "beta1 0 is inside [0, 1)");
    CHECK(config_float(cfg, "gen.top_p") == 0.95, "top_p");
    CHECK(config_bool(cfg, "run.resume") == 1, "resume");
    CHECK(config_int(cfg, "model.n_ctx") == 256, "a section may reopen");
    CHECK(config_int(cfg, "model.d_model") == 64, "untouched key keeps its default");
    snprintf(origin, sizeof origin, "%s:3", path);
    CHECK(!strcmp(config_origin(cfg, "model.n_layer"), origin), "origin %s", config_origin(cfg, "model.n_layer"));
    snprintf(origin, sizeof origin, "%s:14", path);
    CHECK(!strcmp(config_origin(cfg, "run.name"), origin), "origin %s", config_origin(cfg, "run.name"));

    /* Command-line overrides beat the file, whatever their order relative to it in argv. */
    override_ok(cfg, "model.n_layer=6");
    override_ok(cfg, " optim.lr = 0.5 ");
    override_ok(cfg, "run.resume=off");
    override_ok(cfg, "run.name=my run");
    CHECK(config_int(cfg, "model.n_layer") == 6, "override beats file");
    CHECK(config_float(cfg, "optim.lr") == 0.5, "override with spaces");
    CHECK(config_bool(cfg, "run.resume") == 0, "bool override");
    CHECK(!strcmp(config_string(cfg, "run.name"), "my run"), "string override");
    CHECK(!strcmp(config_origin(cfg, "model.n_layer"), "command line"), "origin %s",
          config_origin(cfg, "model.n_layer"));
    config_free(cfg);

    /* config_load_all: file, then overrides, then validation. */
    char* argv[] = {"model.n_head=8", "gen.max_new_tokens=100"};
    Config* all = config_new();
    char err[2048] = "";
    CHECK(config_load_all(all, path, 2, argv, err, sizeof err) == 0, "load_all: %s", err);
    CHECK(config_int(all, "model.n_head") == 8 && config_int(all, "model.n_layer") == 4, "load_all values");
    config_free(all);

    /* A file may be inconsistent alone and fixed by an override: validation comes last. */
    const char* heads6 = fixture("exp/heads6.ini", "[model]\nn_head = 6\n");
    char* fix[] = {"model.d_model=96"};
    all = config_new();
    CHECK(config_load_all(all, heads6, 1, fix, err, sizeof err) == 0, "fixed by override: %s", err);
    config_free(all);
    all = config_new();
    CHECK(config_load_all(all, heads6, 0, NULL, err, sizeof err) != 0 && strstr(err, "model.n_head = 6"),
          "unfixed: %s", err);
    config_free(all);

    /* A failing load changes nothing. */
    const char* half = fixture("exp/half.ini", "[model]\nn_layer = 9\nn_head = x\n");
    cfg = config_new();
    CHECK(config_load_file(cfg, half, err, sizeof err) != 0, "half.ini fails");
    CHECK(config_int(cfg, "model.n_layer") == 2, "n_layer untouched after a failed load: %ld",
          config_int(cfg, "model.n_layer"));
    config_free(cfg);
}

static void test_base_include(void) {
    fixture("inc/base.ini", "[model]\nn_layer = 3\nn_head = 8\nd_model = 128\n[optim]\nlr = 0.01\n[node.1]\n"
                            "model.n_layer = 7\n");
    fixture("inc/mid.ini", "base = base.ini\n[model]\nn_head = 2\n");
    const char* child = fixture("inc/sub/child.ini", "; comment before base\nbase = ../mid.ini\n\n[model]\n"
                                                     "n_layer = 5\n[node.1]\nmodel.n_head = 16\n");
    Config* cfg = load_ok(child);
    CHECK(config_int(cfg, "model.n_layer") == 5, "includer beats base: %ld", config_int(cfg, "model.n_layer"));
    CHECK(config_int(cfg, "model.n_head") == 2, "middle beats its base: %ld", config_int(cfg, "model.n_head"));
    CHECK(config_int(cfg, "model.d_model") == 128, "from the base of the base");
    CHECK(config_float(cfg, "optim.lr") == 0.01, "lr from base");
    CHECK(config_node_int(cfg, 1, "model.n_layer") == 7, "node section from base");
    CHECK(config_node_int(cfg, 1, "model.n_head") == 16, "node section from child");
    char want[600];
    snprintf(want, sizeof want, "%s/inc/sub/../mid.ini:3", tmpdir);
    CHECK(!strcmp(config_origin(cfg, "model.n_head"), want), "origin %s (want %s)", config_origin(cfg, "model.n_head"),
          want);
    snprintf(want, sizeof want, "%s/inc/sub/../base.ini:4", tmpdir);
    CHECK(!strcmp(config_origin(cfg, "model.d_model"), want), "origin %s (want %s)",
          config_origin(cfg, "model.d_model"), want);
    char err[1024] = "";
    CHECK(config_validate(cfg, err, sizeof err) == 0, "validate: %s", err);
    config_free(cfg);

    /* An absolute base path is used as written. */
    char text[700];
    snprintf(text, sizeof text, "base = %s/inc/base.ini\n[gen]\ntemperature = 0\n", tmpdir);
    const char* abs_child = fixture("inc/abs.ini", text);
    cfg = load_ok(abs_child);
    CHECK(config_int(cfg, "model.n_layer") == 3 && config_float(cfg, "gen.temperature") == 0, "absolute base path");
    config_free(cfg);
}

static void test_node_overrides(void) {
    const char* path = fixture("node.ini", "[model]\nn_layer = 3\n"
                                           "[node.3]\nmodel.n_layer = 4\ngen.temperature = 0.5\nmodel.backend = cuda\n"
                                           "[node.0]\noptim.lr = 0\n");
    Config* cfg = load_ok(path);
    CHECK(config_node_int(cfg, 3, "model.n_layer") == 4, "node 3 n_layer");
    CHECK(config_node_float(cfg, 3, "gen.temperature") == 0.5, "node 3 temperature");
    CHECK(!strcmp(config_node_string(cfg, 3, "model.backend"), "cuda"), "node 3 backend");
    CHECK(config_node_float(cfg, 0, "optim.lr") == 0, "node 0 lr");
    CHECK(config_node_int(cfg, 2, "model.n_layer") == 3, "node 2 sees the global value");
    CHECK(config_int(cfg, "model.n_layer") == 3, "global unchanged by node section");
    CHECK(config_float(cfg, "optim.lr") == 3e-4, "global lr unchanged");
    CHECK(config_max_node(cfg) == 3, "max node %d", config_max_node(cfg));
    char want[600];
    snprintf(want, sizeof want, "%s:4", path);
    CHECK(!strcmp(config_node_origin(cfg, 3, "model.n_layer"), want), "node origin %s",
          config_node_origin(cfg, 3, "model.n_layer"));

    /* Command line: node.K.section.key=value, beating the file's node section. */
    override_ok(cfg, "node.3.model.n_layer=8");
    override_ok(cfg, "node.5.optim.lr=0.01");
    override_ok(cfg, "model.n_layer=1"); /* a global override leaves node values alone */
    CHECK(config_node_int(cfg, 3, "model.n_layer") == 8, "command line beats node section");
    CHECK(config_node_float(cfg, 5, "optim.lr") == 0.01, "new node from the command line");
    CHECK(config_node_int(cfg, 5, "model.n_layer") == 1, "node 5 n_layer is the global");
    CHECK(config_node_int(cfg, 3, "model.n_layer") == 8, "node value survives a global override");
    CHECK(config_max_node(cfg) == 5, "max node %d", config_max_node(cfg));
    CHECK(!strcmp(config_node_origin(cfg, 5, "optim.lr"), "command line"), "node origin");
    config_free(cfg);
}

/* ---- round trip ---------------------------------------------------------------------------- */

static void check_same(const Config* a, const Config* b, const char* what) {
    int max = config_max_node(a) > config_max_node(b) ? config_max_node(a) : config_max_node(b);
    CHECK(config_max_node(a) == config_max_node(b), "%s: max node %d vs %d", what, config_max_node(a),
          config_max_node(b));
    for (int node = -1; node <= max; node++) {
        for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
            const CfgField* f = &CONFIG_SCHEMA[i];
            switch (f->type) {
            case CFG_INT:
                CHECK(config_node_int(a, node, f->key) == config_node_int(b, node, f->key), "%s: node %d %s", what,
                      node, f->key);
                break;
            case CFG_FLOAT: {
                double x = config_node_float(a, node, f->key), y = config_node_float(b, node, f->key);
                CHECK(memcmp(&x, &y, sizeof x) == 0, "%s: node %d %s %.17g vs %.17g", what, node, f->key, x, y);
                break;
            }
            case CFG_BOOL:
                CHECK(config_node_bool(a, node, f->key) == config_node_bool(b, node, f->key), "%s: %s", what, f->key);
                break;
            default:
                CHECK(!strcmp(config_node_string(a, node, f->key), config_node_string(b, node, f->key)),
                      "%s: node %d %s '%s' vs '%s'", what, node, f->key, config_node_string(a, node, f->key),
                      config_node_string(b, node, f->key));
            }
        }
    }
}

static Config* write_and_reload(const Config* cfg, const char* rel) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    FILE* f = fopen(path, "w");
    config_write(cfg, f);
    fclose(f);
    return load_ok(path);
}

static void test_round_trip(void) {
    const char* path = fixture("rt.ini", "[model]\nn_layer = 12\ninit = runs/x y/ckpt;1.bin\nbackend = auto\n"
                                         "[optim]\nlr = 3e-4\neps = 1e-12\nbeta2 = 0.99990000000000001\n"
                                         "[run]\nname =\nresume = on\n"
                                         "[node.7]\nmodel.init =\noptim.lr = 0.1\n[node.2]\ngen.top_p = 0.3\n");
    Config* cfg = load_ok(path);
    override_ok(cfg, "net.latency=2.5");
    override_ok(cfg, "node.2.model.d_model=128");
    override_ok(cfg, "swarm.seed=4611686018427387904");
    Config* back = write_and_reload(cfg, "rt_out.ini");
    check_same(cfg, back, "round trip");
    /* Writing the reloaded config gives the same text minus origins: a fixed point. */
    Config* again = write_and_reload(back, "rt_out2.ini");
    check_same(back, again, "second round trip");
    config_free(again);
    config_free(back);
    config_free(cfg);

    /* Random values across every numeric key's range, floats with all 53 bits used. */
    srand48(12345);
    for (int trial = 0; trial < 20; trial++) {
        cfg = config_new();
        for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
            const CfgField* f = &CONFIG_SCHEMA[i];
            char a[256];
            for (int node = -1; node < (f->per_node ? 2 : 0); node++) {
                char prefix[32] = "";
                if (node >= 0) snprintf(prefix, sizeof prefix, "node.%d.", node * 9);
                if (f->type == CFG_FLOAT) {
                    double x = f->min + (f->max - f->min) * drand48();
                    if ((f->min_open && x == f->min) || (f->max_open && x == f->max)) continue;
                    snprintf(a, sizeof a, "%s%s=%.17g", prefix, f->key, x);
                } else if (f->type == CFG_INT) {
                    long x = (long)f->min + (long)(drand48() * (f->max - f->min));
                    snprintf(a, sizeof a, "%s%s=%ld", prefix, f->key, x);
                } else if (f->type == CFG_BOOL) {
                    snprintf(a, sizeof a, "%s%s=%d", prefix, f->key, (int)(drand48() < 0.5));
                } else {
                    continue;
                }
                override_ok(cfg, a);
            }
        }
        back = write_and_reload(cfg, "rt_rand.ini");
        check_same(cfg, back, "random round trip");
        config_free(back);
        config_free(cfg);
    }
}

/* ---- errors ----------------------------------------------------------------------------------- */

static void test_file_errors(void) {
    /* bad int, trailing junk, overflow, float for an int */
    EXPECT_FILE_ERROR("e/int.ini", "[model]\nn_head = 4\nn_layer = abc\n", "e/int.ini:3: ", "model.n_layer = 'abc'",
                      "expected an integer in [1, 64]");
    EXPECT_FILE_ERROR("e/int2.ini", "[model]\nn_layer = 12x\n", "e/int2.ini:2: ", "'12x'", "expected an integer in [1, 64]");
    EXPECT_FILE_ERROR("e/int3.ini", "[swarm]\nseed = 99999999999999999999\n", "e/int3.ini:2: ",
                      "swarm.seed = '99999999999999999999'", "expected an integer in [0, 2^62]");
    EXPECT_FILE_ERROR("e/int4.ini", "[model]\nn_layer = 1.5\n", "'1.5'", "expected an integer");
    EXPECT_FILE_ERROR("e/int5.ini", "[model]\nn_layer =\n", "e/int5.ini:2: ", "model.n_layer = ''", "expected an integer");
    /* out of bounds */
    EXPECT_FILE_ERROR("e/oob.ini", "[model]\nn_layer = 65\n", "e/oob.ini:2: ", "model.n_layer = '65'",
                      "expected an integer in [1, 64]");
    EXPECT_FILE_ERROR("e/oob2.ini", "[model]\nn_layer = 0\n", "'0'", "expected an integer in [1, 64]");
    EXPECT_FILE_ERROR("e/oob3.ini", "[swarm]\nseed = 4611686018427387905\n", "expected an integer in [0, 2^62]");
    EXPECT_FILE_ERROR("e/oob4.ini", "[optim]\nlr = 1.5\n", "e/oob4.ini:2: ", "optim.lr = '1.5'",
                      "expected a number in [0, 1]");
    EXPECT_FILE_ERROR("e/oob5.ini", "[optim]\nbeta1 = 1\n", "optim.beta1 = '1'", "expected a number in [0, 1)");
    EXPECT_FILE_ERROR("e/oob6.ini", "[gen]\ntop_p = 0\n", "gen.top_p = '0'", "expected a number in (0, 1]");
    EXPECT_FILE_ERROR("e/oob7.ini", "[optim]\ngrad_clip = -1e-300\n", "expected a number in [0, 1e6]");
    /* bad float */
    EXPECT_FILE_ERROR("e/flt.ini", "[optim]\nlr = 0.1x\n", "e/flt.ini:2: ", "optim.lr = '0.1x'",
                      "expected a number in [0, 1]");
    EXPECT_FILE_ERROR("e/flt2.ini", "[optim]\nlr = fast\n", "'fast'", "expected a number in [0, 1]");
    /* nan / inf */
    EXPECT_FILE_ERROR("e/nan.ini", "[optim]\nlr = nan\n", "e/nan.ini:2: ", "optim.lr = 'nan'",
                      "expected a finite number in [0, 1]");
    EXPECT_FILE_ERROR("e/inf.ini", "[net]\nlatency = inf\n", "net.latency = 'inf'", "expected a finite number");
    EXPECT_FILE_ERROR("e/inf2.ini", "[net]\nlatency = -Infinity\n", "expected a finite number");
    EXPECT_FILE_ERROR("e/inf3.ini", "[net]\nlatency = 1e999\n", "'1e999'", "expected a finite number");
    /* bad bool */
    EXPECT_FILE_ERROR("e/bool.ini", "[run]\nresume = maybe\n", "e/bool.ini:2: ", "run.resume = 'maybe'",
                      "expected a boolean (true/false, yes/no, on/off, 1/0)");
    /* bad enum: lists the choices */
    EXPECT_FILE_ERROR("e/enum.ini", "[model]\nbackend = gpu\n", "e/enum.ini:2: ", "model.backend = 'gpu'",
                      "expected one of cpu, cuda, auto");
    EXPECT_FILE_ERROR("e/enum2.ini", "[sampling]\nfilter = Zero_adv\n", "expected one of zero_adv, none");
    /* unknown key, with a suggestion when one is near, else the section's keys */
    EXPECT_FILE_ERROR("e/key.ini", "[model]\nn_layers = 4\n", "e/key.ini:2: ", "model.n_layers = '4'",
                      "unknown key model.n_layers; did you mean model.n_layer?");
    EXPECT_FILE_ERROR("e/key2.ini", "[optim]\ntemperature = 0.7\n", "unknown key optim.temperature",
                      "did you mean gen.temperature?");
    EXPECT_FILE_ERROR("e/key3.ini", "[model]\nzzzzzzzz = 1\n", "e/key3.ini:2: ", "unknown key model.zzzzzzzz",
                      "expected one of model.n_layer, model.n_head");
    /* unknown section, at its own line even when empty */
    EXPECT_FILE_ERROR("e/sec.ini", "[model]\nn_layer = 2\n\n[modle]\nn_head = 2\n", "e/sec.ini:4: ", "[modle]",
                      "unknown section; did you mean [model]?");
    EXPECT_FILE_ERROR("e/sec2.ini", "[zebra]\n", "e/sec2.ini:1: ", "[zebra]: unknown section",
                      "expected one of [model], [optim]", "[node.K]");
    /* duplicate key in one file (also across a reopened section, and base twice) */
    EXPECT_FILE_ERROR("e/dup.ini", "[model]\nn_layer = 2\nn_head = 4\nn_layer = 3\n", "e/dup.ini:4: ",
                      "model.n_layer = '3'", "duplicate key (first set at ", "e/dup.ini:2)");
    EXPECT_FILE_ERROR("e/dup2.ini", "[gen]\ntop_p = 0.5\n[model]\n[gen]\ntop_p = 0.6\n", "e/dup2.ini:5: ",
                      "duplicate key", "e/dup2.ini:2)");
    EXPECT_FILE_ERROR("e/dup3.ini", "[node.1]\nmodel.n_layer = 2\n[node.01]\nmodel.n_layer = 3\n", "e/dup3.ini:4: ",
                      "[node.01] model.n_layer = '3'", "duplicate key");
    fixture("e/b.ini", "[model]\n");
    EXPECT_FILE_ERROR("e/dup4.ini", "base = b.ini\nbase = b.ini\n", "e/dup4.ini:2: ", "base = 'b.ini'",
                      "duplicate key", "one base per file");
    /* base cycle (self and two-file), and a missing base */
    EXPECT_FILE_ERROR("e/self.ini", "base = self.ini\n", "e/self.ini:1: ", "include cycle", "e/self.ini -> ");
    fixture("e/cyc_b.ini", "base = cyc_a.ini\n[model]\nn_layer = 2\n");
    EXPECT_FILE_ERROR("e/cyc_a.ini", "base = cyc_b.ini\n", "e/cyc_b.ini:1: base = 'cyc_a.ini'", "include cycle",
                      "e/cyc_a.ini -> ", "e/cyc_b.ini -> ");
    EXPECT_FILE_ERROR("e/nobase.ini", "base = nope.ini\n[model]\n", "e/nobase.ini:1: ", "base = 'nope.ini'",
                      "cannot open '", "e/nope.ini'", "No such file or directory");
    EXPECT_FILE_ERROR("e/emptybase.ini", "base =\n", "e/emptybase.ini:1: ", "expected the path of an INI file");
    /* errors inside a base name the base file */
    fixture("e/badbase.ini", "[model]\n\nn_layer = big\n");
    EXPECT_FILE_ERROR("e/usesbad.ini", "base = badbase.ini\n", "e/badbase.ini:3: ", "model.n_layer = 'big'");
    /* key before any section other than base */
    EXPECT_FILE_ERROR("e/top.ini", "n_layer = 3\n[model]\n", "e/top.ini:1: ", "n_layer = '3'",
                      "key before any [section]", "base = FILE", "did you mean model.n_layer?");
    /* a swarm-wide key in a node section */
    EXPECT_FILE_ERROR("e/pernode.ini", "[node.1]\nmodel.init_seed = 5\n", "e/pernode.ini:2: ",
                      "[node.1] model.init_seed = '5'", "model.init_seed cannot be overridden per node",
                      "expected it in [model]");
    EXPECT_FILE_ERROR("e/pernode2.ini", "[node.0]\nn_layer = 5\n", "e/pernode2.ini:2: ", "unknown key n_layer",
                      "did you mean model.n_layer?", "section.key");
    EXPECT_FILE_ERROR("e/pernode3.ini", "[node.0]\nmodel.n_layer = 99\n", "[node.0] model.n_layer = '99'",
                      "expected an integer in [1, 64]");
    /* bad node index */
    EXPECT_FILE_ERROR("e/nidx.ini", "[node.x]\nmodel.n_layer = 2\n", "e/nidx.ini:1: ", "[node.x]",
                      "expected [node.K] with K an integer in [0, 4095]");
    EXPECT_FILE_ERROR("e/nidx2.ini", "\n[node.-1]\n", "e/nidx2.ini:2: ", "[node.-1]", "K an integer in [0, 4095]");
    EXPECT_FILE_ERROR("e/nidx3.ini", "[node.4096]\n", "[node.4096]", "K an integer in [0, 4095]");
    EXPECT_FILE_ERROR("e/nidx4.ini", "[node]\n", "[node]", "K an integer");
    EXPECT_FILE_ERROR("e/nidx5.ini", "[node.1.5]\n", "[node.1.5]", "K an integer");
    /* malformed lines (libinih's error line) */
    EXPECT_FILE_ERROR("e/mal.ini", "[model]\nn_layer = 2\ngarbage\nn_head = 4\n", "e/mal.ini:3: ",
                      "malformed line 'garbage'", "expected '[section]', 'key = value' or a comment");
    EXPECT_FILE_ERROR("e/mal2.ini", "[model\nn_layer = 2\n", "e/mal2.ini:1: ", "malformed line '[model'");
    EXPECT_FILE_ERROR("e/mal3.ini", "[model]\n= 3\n", "e/mal3.ini:2: ", "malformed line '= 3'");
    /* d_model not divisible by n_head (config_validate), globally and per node */
    EXPECT_FILE_ERROR("e/div.ini", "[model]\nd_model = 100\nn_head = 6\n", "e/div.ini:2: ",
                      "model.d_model = 100 (", "e/div.ini:2)", "model.n_head = 6 (", "e/div.ini:3)",
                      "expected model.d_model to be a multiple of model.n_head");
    EXPECT_FILE_ERROR("e/div2.ini", "[model]\nn_head = 8\n[node.2]\nmodel.n_head = 5\n", "e/div2.ini:4: ",
                      "[node.2] model.d_model = 64 (default)", "model.n_head = 5", "multiple of model.n_head");
    /* a line too long for libinih's buffer, and binary junk */
    char* longline = malloc(5000);
    strcpy(longline, "[run]\nname = ");
    memset(longline + strlen(longline), 'x', 4200);
    strcpy(longline + strlen("[run]\nname = ") + 4200, "\n");
    EXPECT_FILE_ERROR("e/long.ini", longline, "e/long.ini:2: ", "line longer than 4094 characters");
    free(longline);
    /* a folder is not a config file */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/e/adir.ini", tmpdir);
    mkdir(dir, 0700);
    Config* cfg = config_new();
    char err[1024] = "";
    CHECK(config_load_file(cfg, dir, err, sizeof err) != 0 && strstr(err, "adir.ini") && strstr(err, "cannot read"),
          "directory: %s", err);
    config_free(cfg);
}

static void test_missing_file(void) {
    char path[600], err[1024] = "";
    snprintf(path, sizeof path, "%s/does/not/exist.ini", tmpdir);
    Config* cfg = config_new();
    CHECK(config_load_file(cfg, path, err, sizeof err) != 0, "missing file loads?");
    CHECK(strstr(err, path) && strstr(err, "cannot open config file") && strstr(err, "No such file or directory"),
          "message: %s", err);
    printf("  ok  %s\n", err);
    config_free(cfg);
}

static void test_override_errors(void) {
    EXPECT_OVERRIDE_ERROR("optim.lr=-1", "command line: optim.lr=-1: expected a number in [0, 1]");
    EXPECT_OVERRIDE_ERROR("model.n_layer=abc", "command line: model.n_layer=abc: expected an integer in [1, 64]");
    EXPECT_OVERRIDE_ERROR("optim.lr=nan", "command line: optim.lr=nan: expected a finite number in [0, 1]");
    EXPECT_OVERRIDE_ERROR("run.resume=2", "command line: run.resume=2: expected a boolean");
    EXPECT_OVERRIDE_ERROR("model.backend=tpu", "command line: model.backend=tpu: expected one of cpu, cuda, auto");
    EXPECT_OVERRIDE_ERROR("grpo.lr=0.1", "command line: grpo.lr=0.1: unknown key grpo.lr; did you mean optim.lr?");
    EXPECT_OVERRIDE_ERROR("modle.n_layer=3", "unknown key modle.n_layer; did you mean model.n_layer?");
    EXPECT_OVERRIDE_ERROR("n_layer=3", "unknown key n_layer; did you mean model.n_layer?");
    EXPECT_OVERRIDE_ERROR("qqq.rrr=3", "unknown key qqq.rrr; expected section.key with a section among [model]");
    EXPECT_OVERRIDE_ERROR("model.n_layer", "command line: 'model.n_layer': expected section.key=value");
    EXPECT_OVERRIDE_ERROR("node.1.swarm.seed=3", "command line: node.1.swarm.seed=3: ",
                          "swarm.seed cannot be overridden per node");
    EXPECT_OVERRIDE_ERROR("node.x.model.n_layer=3", "command line: node.x.model.n_layer=3: ",
                          "expected node.K.section.key=value with K an integer in [0, 4095]");
    EXPECT_OVERRIDE_ERROR("node.4096.model.n_layer=3", "K an integer in [0, 4095]");
    EXPECT_OVERRIDE_ERROR("node.2.model.n_layer=0", "command line: node.2.model.n_layer=0: expected an integer in [1, 64]");
    /* a group of one completion has advantage 0: it would train nothing, every round, silently */
    EXPECT_OVERRIDE_ERROR("grpo.completions=1", "command line: grpo.completions=1: expected an integer in [2, 256]");
    EXPECT_OVERRIDE_ERROR("node.3.grpo.completions=1", "expected an integer in [2, 256]");
    EXPECT_OVERRIDE_ERROR("run.name=a ;b", "command line: run.name=a ;b: expected one line of text without ' ;'");
    EXPECT_OVERRIDE_ERROR("run.name=a\nb", "command line: run.name=a\\x0ab: expected one line of text");
    /* d_model / n_head through overrides */
    Config* cfg = config_new();
    char err[1024] = "";
    override_ok(cfg, "node.4.model.d_model=102");
    CHECK(config_validate(cfg, err, sizeof err) != 0 && strstr(err, "command line: [node.4] model.d_model = 102 (command line)") &&
              strstr(err, "model.n_head = 4 (default)"),
          "node divisibility via command line: %s", err);
    printf("  ok  %s\n", err);
    config_free(cfg);
}

/* ---- set-up ------------------------------------------------------------------------------ */

/* config_enum: the index among the schema's choices, which is the C enum of config_enums.h. */
static void test_enums(void) {
    Config* cfg = config_new();
    CHECK(config_enum(cfg, "net.transport") == NET_TRANSPORT_P2P, "default transport");
    CHECK(config_enum(cfg, "net.clock") == NET_CLOCK_VIRTUAL, "default clock");
    CHECK(config_enum(cfg, "model.backend") == 0, "backend cpu is choice 0");
    override_ok(cfg, "net.latency_dist=lognormal");
    override_ok(cfg, "node.2.net.fault=lie_logprobs");
    override_ok(cfg, "node.1.grpo.external=tis");
    override_ok(cfg, "sampling.filter=none");
    CHECK(config_enum(cfg, "net.latency_dist") == LATENCY_LOGNORMAL, "latency_dist");
    CHECK(config_node_enum(cfg, 2, "net.fault") == FAULT_LIE_LOGPROBS, "node 2 fault");
    CHECK(config_node_enum(cfg, 0, "net.fault") == FAULT_NONE, "node 0 fault");
    CHECK(config_node_enum(cfg, 1, "grpo.external") == EXTERNAL_TIS, "node 1 external");
    CHECK(config_enum(cfg, "grpo.external") == EXTERNAL_RATIO1, "global external");
    CHECK(config_enum(cfg, "sampling.filter") == FILTER_NONE, "filter");
    config_free(cfg);
}

int main(void) {
    const char* base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/sapo_test_config.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "mkdtemp %s: %s\n", tmpdir, strerror(errno));
        return 1;
    }
    test_defaults();
    test_file_and_overrides();
    test_base_include();
    test_node_overrides();
    test_round_trip();
    test_file_errors();
    test_missing_file();
    test_override_errors();
    test_enums();
    remove_tree(tmpdir);
    printf("test_config: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed ? 1 : 0;
}
