/* The one settings-loading step of the commands that train a model (sapo run, pretrain,
 * demo, bench round): the configuration loaded (CONFIG.ini, then the user's overrides), the
 * keys a command forces over them, the typed settings read once (node_settings.h) and, when
 * asked, checked for a swarm (swarm_config_check). */
#ifndef SAPO_SWARM_SETTINGS_LOAD_H
#define SAPO_SWARM_SETTINGS_LOAD_H

#include <stddef.h>

#include "core/config.h"
#include "swarm/node_settings.h"

/* What a command asks of the step. */
typedef struct {
    const char* path;        /* CONFIG.ini, or NULL: every key at its default */
    int n_overrides;         /* the user's section.key=value overrides, in order */
    char* const* overrides;
    /* The command's own keys, set over the user's (the config is then validated again), or
     * NULL. Returns 0, or -1 with the message in err. */
    int (*force)(Config* cfg, char* err, size_t errlen);
    int n_nodes; /* settings for this many nodes; 0: node 0 and every [node.K] the config sets */
    int check;   /* 1: the settings checked by swarm_config_check */
} SettingsRequest;

/* The resolved configuration, and its settings in *set unless set is NULL (the caller frees
 * both: config_free, run_settings_free). NULL with the message in err, nothing kept. */
Config* settings_load(const SettingsRequest* req, RunSettings* set, char* err, size_t errlen);

#endif
