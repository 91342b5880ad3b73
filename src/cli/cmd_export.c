/* `sapo export`: writes a llama-family checkpoint (one a run or `sapo lm` saved) as a Hugging
 * Face directory that transformers loads as the same model (model/hf_dir.h), optionally with
 * the tokenizer files of the directory the model first came from. */
#include <stdio.h>

#include "cli/commands.h"
#include "model/checkpoint.h"
#include "model/family.h"
#include "model/hf_dir.h"

static const CliOption OPTIONS[] = {
    {"ckpt", "MODEL", "a llama-family sapo checkpoint"},
    {"out", "DIR", "the Hugging Face directory to write (created if needed)"},
    {"tokenizer-from", "HF_DIR",
     "copy tokenizer.json (and tokenizer_config.json, generation_config.json\n"
     "when present) and the token ids of config.json from this directory"},
    {NULL, NULL, NULL},
};
enum { OPT_CKPT, OPT_OUT, OPT_TOKENIZER };

static void usage(FILE* out) {
    fprintf(out,
            "usage: sapo export --ckpt MODEL --out DIR [--tokenizer-from HF_DIR]\n"
            "Writes a llama-family checkpoint as a Hugging Face directory: config.json\n"
            "(Qwen2ForCausalLM for a model with q/k/v biases and no o_proj bias, else\n"
            "LlamaForCausalLM) and model.safetensors (f32), which transformers loads as the same model.\n");
    cli_print_options(out, OPTIONS);
    fprintf(out,
            "config.json is written last: a directory that has one is complete. Only the parameters\n"
            "are exported (not the Adam moments). Exit 0 on success, 2 on bad input or a failed write.\n");
}

int cmd_export(int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse("export", OPTIONS, argc, argv, &a);
    const char* ckpt = a.opt[OPT_CKPT];
    const char* out = a.opt[OPT_OUT];
    const char* tok = a.opt[OPT_TOKENIZER];
    if (parsed == 0 && a.n_pos > 0) parsed = cli_unexpected("export", a.pos[0], "export takes only options");
    if (parsed > 0) {
        cli_args_free(&a);
        usage(stdout);
        return 0;
    }
    if (parsed == 0 && (!ckpt || !out)) {
        usage(stderr);
        parsed = -1;
    }
    int rc = 2;
    char err[512];
    CheckpointInfo info;
    if (parsed != 0) {
        /* the message is out */
    } else if (checkpoint_read_info(ckpt, &info, err, sizeof err)) {
        fprintf(stderr, "sapo export: %s\n", err);
    } else if (!model_family(info.cfg.family)->from_hf_dir) {
        fprintf(stderr, "sapo export: the %s family has no Hugging Face form; only llama-family checkpoints export\n",
                model_family(info.cfg.family)->name);
    } else {
        /* parameters only: the smallest capacity the backend accepts, whatever n_ctx is */
        ModelCapacity cap = {
            .max_tokens = 1, .max_att = info.cfg.n_head, .max_prefixes = 1, .max_rows = 1, .row_ctx = 1};
        Model* m = model_create_cap(&info.cfg, model_backend_find("cpu"), &cap, 0);
        if (checkpoint_load(m, ckpt, 0, err, sizeof err) || hf_export(m, out, tok, err, sizeof err))
            fprintf(stderr, "sapo export: %s\n", err);
        else
            rc = 0;
        model_free(m);
        if (!rc) printf("sapo export: wrote %s\n", out);
    }
    cli_args_free(&a);
    return rc;
}
