/* ChatML prompt text (see chat_prompt.h). */
#include "model/text/chat_prompt.h"

#include <stdio.h>
#include <string.h>

#include "core/check.h"

char* chatml_prompt(const char* system, const char* user) {
    static const char SYS_HEAD[] = "<|im_start|>system\n", USER_HEAD[] = "<|im_start|>user\n", END[] = "<|im_end|>\n",
                      ASSISTANT[] = "<|im_start|>assistant\n";
    size_t n = strlen(USER_HEAD) + strlen(user) + strlen(END) + strlen(ASSISTANT) + 1;
    if (system) n += strlen(SYS_HEAD) + strlen(system) + strlen(END);
    char* s = mallocCheck(n);
    size_t k = 0;
    if (system) k += (size_t)snprintf(s + k, n - k, "%s%s%s", SYS_HEAD, system, END);
    snprintf(s + k, n - k, "%s%s%s%s", USER_HEAD, user, END, ASSISTANT);
    return s;
}
