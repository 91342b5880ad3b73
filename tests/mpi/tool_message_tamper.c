/* tool_message_tamper IN OUT logprob|byte G C I: rewrites an encoded swarm message with one
 * change, for the `sapo verify` test: the claimed log-prob of byte I of completion C of group
 * G moved by one ulp toward -inf (logprob), or that byte replaced by another printable byte
 * (byte); re-encoded, so the record is well-formed and only the claim is false. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swarm/net/message.h"

int main(int argc, char** argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s IN OUT logprob|byte G C I\n", argv[0]);
        return 2;
    }
    FILE* f = fopen(argv[1], "rb");
    if (!f) return 2;
    static uint8_t buf[MESSAGE_MAX_BYTES];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    SwarmMessage msg;
    char err[256];
    if (message_decode(buf, len, &msg, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int g = atoi(argv[4]), c = atoi(argv[5]), i = atoi(argv[6]);
    if (g >= msg.n_groups || c >= msg.groups[g].n_completions || i >= (int)strlen(msg.groups[g].completions[c]) ||
        !msg.groups[g].logprobs || !msg.groups[g].logprobs[c]) {
        fprintf(stderr, "no such byte with a log-prob\n");
        return 2;
    }
    if (!strcmp(argv[3], "logprob")) {
        float* lp = &msg.groups[g].logprobs[c][i];
        *lp = nextafterf(*lp, -INFINITY);
    } else {
        char* ch = &msg.groups[g].completions[c][i];
        *ch = *ch == 'x' ? 'y' : 'x';
    }
    uint8_t* out;
    size_t out_len;
    if (message_encode(&msg, &out, &out_len, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    f = fopen(argv[2], "wb");
    if (!f || fwrite(out, 1, out_len, f) != out_len || fclose(f)) return 2;
    free(out);
    message_free(&msg);
    return 0;
}
