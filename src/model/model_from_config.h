/* Model shape and optimizer settings read from the run configuration for one node. */
#ifndef SAPO_MODEL_MODEL_FROM_CONFIG_H
#define SAPO_MODEL_MODEL_FROM_CONFIG_H

#include "core/config.h"
#include "model/generate.h"
#include "model/gpt.h"

GPTConfig gpt_config_from(const Config* cfg, int node);
AdamWConfig adamw_config_from(const Config* cfg, int node);
GenConfig gen_config_from(const Config* cfg, int node); /* stop string left NULL */

#endif
