/* The one settings-loading step (see settings_load.h). */
#include "swarm/settings_load.h"

#include "swarm/node_config.h"

Config* settings_load(const SettingsRequest* req, RunSettings* set, char* err, size_t errlen) {
    Config* cfg = config_new();
    int bad = config_load_all(cfg, req->path, req->n_overrides, req->overrides, err, errlen) ||
              (req->force && (req->force(cfg, err, errlen) || config_validate(cfg, err, errlen)));
    if (!bad && set) {
        *set = run_settings_read(cfg, req->n_nodes > 0 ? req->n_nodes : config_max_node(cfg) + 1);
        run_settings_read_model_shapes(set);
        if (req->check && swarm_config_check(set, err, errlen)) {
            run_settings_free(set);
            bad = 1;
        }
    }
    if (bad) {
        config_free(cfg);
        return NULL;
    }
    return cfg;
}
