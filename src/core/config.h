/* Run configuration: INI files (libinih) checked against one typed schema, with
 * `section.key=value` command-line overrides, a single `base = other.ini` include, and
 * `[node.K]` sections that override per-node keys for node K. Every error names where the
 * value came from (file:line or "command line"), the section.key, the bad value and what
 * was expected; unknown keys are errors. */
#ifndef SAPO_CORE_CONFIG_H
#define SAPO_CORE_CONFIG_H

#include <stddef.h>
#include <stdio.h>

typedef enum { CFG_INT, CFG_FLOAT, CFG_BOOL, CFG_STRING, CFG_ENUM } CfgType;

typedef struct {
    const char* key;     /* "section.name", e.g. "model.n_layer" */
    CfgType type;
    const char* def;     /* default, as it would be written in the INI file */
    double min, max;     /* bounds for CFG_INT / CFG_FLOAT (inclusive) */
    const char* choices; /* CFG_ENUM: "a|b|c" */
    int per_node;        /* may be overridden in a [node.K] section */
    const char* help;
    int min_open, max_open; /* CFG_FLOAT: 1 excludes that bound, e.g. [0, 1) */
} CfgField;

/* Node indices K in [node.K] and node.K.section.key run over [0, CONFIG_MAX_NODES). */
#define CONFIG_MAX_NODES 4096

extern const CfgField CONFIG_SCHEMA[];
extern const int CONFIG_SCHEMA_LEN;

/* The schema entry of "section.key", or NULL when there is none. */
const CfgField* config_field(const char* key);

typedef struct Config Config;

Config* config_new(void); /* every key at its default */
void config_free(Config* cfg);

/* Loads an INI file over the current values (a `base = PATH` line before any section is
 * loaded first, relative to the including file). Returns 0, or -1 with the message in err;
 * a failing load (like a failing override) leaves cfg as it was. */
int config_load_file(Config* cfg, const char* path, char* err, size_t errlen);
/* One `section.key=value` (or `node.K.section.key=value`) override from the command line. */
int config_set_override(Config* cfg, const char* assignment, char* err, size_t errlen);
/* Checks rules that span keys (model.d_model a multiple of model.n_head, globally and for
 * every node with overrides). Call it once after the last load and override: a file may
 * be inconsistent on its own and fixed by a later override. Returns 0 or -1 with err. */
int config_validate(const Config* cfg, char* err, size_t errlen);
/* The usual sequence: load path (when not NULL), apply the overrides in order, validate.
 * On error cfg keeps whatever the steps before the failing one set. */
int config_load_all(Config* cfg, const char* path, int n_overrides, char* const* overrides, char* err,
                    size_t errlen);

/* Typed getters; a key missing from the schema or of another type is a programming error
 * and stops the program. The node_ variants see the [node.K] override when there is one
 * (node < 0, or a node without one, gives the swarm-wide value); any key may be asked. */
long config_int(const Config* cfg, const char* key);
double config_float(const Config* cfg, const char* key);
int config_bool(const Config* cfg, const char* key);
const char* config_string(const Config* cfg, const char* key); /* also CFG_ENUM */
long config_node_int(const Config* cfg, int node, const char* key);
double config_node_float(const Config* cfg, int node, const char* key);
const char* config_node_string(const Config* cfg, int node, const char* key);
int config_node_bool(const Config* cfg, int node, const char* key);
/* A CFG_ENUM key's value as its index among the schema's choices ("cpu|cuda|auto": cuda is
 * 1), which is the matching C enum of core/config_enums.h. */
int config_enum(const Config* cfg, const char* key);
int config_node_enum(const Config* cfg, int node, const char* key);
/* Where a key's value came from: "default", "FILE:LINE" or "command line". */
const char* config_origin(const Config* cfg, const char* key);
const char* config_node_origin(const Config* cfg, int node, const char* key);
/* The highest K with a [node.K] override, or -1 when there is none (a run with fewer
 * ranks than that may want to warn). */
int config_max_node(const Config* cfg);

/* The resolved configuration as an INI file that config_load_file reads back to the same
 * values (node sections included). */
void config_write(const Config* cfg, FILE* out);
/* The schema as a table: key, type, default, bounds or choices, help. */
void config_print_schema(FILE* out);

#endif
