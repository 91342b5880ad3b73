/* The settings' one file-reading step (swarm/node_settings.h, swarm/settings_load.h): reading
 * the settings of a llama node touches no file (its shape stays the configured one);
 * run_settings_read_model_shapes, which settings_load runs, gives it the Hugging Face
 * directory's shape with the context cut to model.n_ctx; a directory that cannot be read
 * leaves the configured shape, and the swarm check names model.hf_dir. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "swarm/settings_load.h"
#include "../test_assert.h"

/* a llama config.json shaped unlike the defaults (d_model 64, n_layer 2, n_ctx 128) */
#define HF_CONFIG                                                                                           \
    "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 48, \"num_hidden_layers\": 3, "          \
    "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 300, \"max_position_embeddings\": " \
    "96}"

static Config* load(const char* hf_dir, int n_ctx, int check, RunSettings* set, char* err, size_t errlen) {
    char o_dir[600], o_ctx[64];
    snprintf(o_dir, sizeof o_dir, "model.hf_dir=%s", hf_dir);
    snprintf(o_ctx, sizeof o_ctx, "model.n_ctx=%d", n_ctx);
    char* overrides[] = {"model.family=llama", o_dir, o_ctx};
    SettingsRequest req = {.n_overrides = 3, .overrides = overrides, .n_nodes = 1, .check = check};
    return settings_load(&req, set, err, errlen);
}

int main(void) {
    char root[] = "/tmp/sapo_settings_load.XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/config.json", root);
    FILE* f = fopen(path, "w");
    fputs(HF_CONFIG, f);
    fclose(f);
    char err[512] = "";

    /* the whole load: the directory's shape, n_ctx the smaller of the two */
    RunSettings set;
    Config* cfg = load(root, 64, 0, &set, err, sizeof err);
    EXPECT(cfg != NULL, "settings_load refused: %s", err);
    if (cfg) {
        ModelShape g = set.node[0].model;
        EXPECT(g.d_model == 48 && g.n_layer == 3 && g.n_head == 4 && g.vocab == 300,
               "shape d_model %d n_layer %d n_head %d vocab %d, expected the directory's 48 3 4 300", g.d_model,
               g.n_layer, g.n_head, g.vocab);
        EXPECT(g.n_ctx == 64, "n_ctx %d, expected model.n_ctx 64 (below the directory's 96)", g.n_ctx);
        EXPECT(g.family == MODEL_FAMILY_LLAMA, "shape family %d", (int)g.family);

        /* reading alone keeps the configured shape: no file was read */
        RunSettings pure = run_settings_read(cfg, 1);
        EXPECT(pure.node[0].model.d_model == 64 && pure.node[0].model.n_layer == 2,
               "run_settings_read gave d_model %d n_layer %d: it read the directory", pure.node[0].model.d_model,
               pure.node[0].model.n_layer);
        EXPECT(pure.node[0].model.family == MODEL_FAMILY_LLAMA, "pure read lost the family");
        run_settings_read_model_shapes(&pure);
        EXPECT(pure.node[0].model.d_model == 48, "run_settings_read_model_shapes gave d_model %d",
               pure.node[0].model.d_model);
        run_settings_free(&pure);
        run_settings_free(&set);
        config_free(cfg);
    }

    /* the context above the directory's positions is cut to them */
    cfg = load(root, 200, 0, &set, err, sizeof err);
    EXPECT(cfg != NULL, "settings_load refused n_ctx 200: %s", err);
    if (cfg) {
        EXPECT(set.node[0].model.n_ctx == 96, "n_ctx %d, expected the directory's 96", set.node[0].model.n_ctx);
        run_settings_free(&set);
        config_free(cfg);
    }

    /* a directory that is not there: the configured shape, and the check names model.hf_dir */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/absent", root);
    cfg = load(missing, 64, 1, &set, err, sizeof err);
    EXPECT(cfg == NULL, "settings_load accepted a missing model.hf_dir");
    EXPECT_MSG(err, "model.hf_dir");
    if (cfg) config_free(cfg);

    unlink(path);
    rmdir(root);
    return test_finish("settings_load");
}
