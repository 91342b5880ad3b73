/* Brainf*ck generation for the bf task's three templates (see bf_compile.h).
 *
 * The task compiles a fixed C-like template whose only varying parts are literals: a word
 * in a print() call (difficulty 1) or the integer initialisers and one comparison constant
 * (difficulties 2 and 3). BF-it emits code for a literal that depends on its value alone
 * and code for everything else that does not depend on the literals at all, so a compiled
 * template is fixed text with the literal codes spliced in. The fixed text below is BF-it's
 * output for the templates with the literal codes cut out (tests/reference/test_tasks_b.py
 * checks every generated program against the real compiler); the literal codes are
 * generated here the way BF-it generates them. */
#include "tasks/ports/bf_compile.h"

#include <stdlib.h>

static const char BF_MAIN_HEAD[] =
    ">>>>>[-]><>[-]<<<<<[-]>>>>[>+<<<<<+>>>>-]>[<+>-]<><";

static const char BF_AFTER_TARGET[] =
    "<>[-]<<<<[-]>>>[>+<<<<+>>>-]>[<+>-]<><";

static const char BF_AFTER_X[] =
    "<>[-]<<<[-]>>[>+<<<+>>-]>[<+>-]<><";

static const char BF_D2_TAIL[] =
    "<>[-]<<[-]>[>+<<+>-]>[<+>-]<><[-]>[-]<<<<<[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-][-]>[-]<<<<<"
    "[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-]<<>>[-]>[-]<<[>[-]<<[>>+>+<<<-]>>[<<+>>-]+>[[-]<-<<->>"
    ">]<<-]<[-]>>[<<+>>-]<<[[-]>[-]<<<<<[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-][-]>[-]<<<<[>>>+>+<"
    "<<<-]>>>>[<<<<+>>>>-]<<>[<+>-]<>[-]<<<<<[-]>>>>[>+<<<<<+>>>>-]>[<+>-]<><[-]>[-]<<<<<[>>>"
    ">+>+<<<<<-]>>>>>[<<<<<+>>>>>-][-]>[-]<<<[>>+>+<<<-]>>>[<<<+>>>-]<<>[<+>-]<>[-]<<<<<[-]>>"
    ">>[>+<<<<<+>>>>-]>[<+>-]<><[-]>[-]<<<<<[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-][-]>[-]<<<<<[>>"
    ">>+>+<<<<<-]>>>>>[<<<<<+>>>>>-]<<>>[-]>[-]<<[>[-]<<[>>+>+<<<-]>>[<<+>>-]+>[[-]<-<<->>>]<"
    "<-]<[-]>>[<<+>>-]<<][-]>[-]>[-]<<<<<<[>>>>>+>+<<<<<<-]>>>>>>[<<<<<<+>>>>>>-]<<>>[-]>[-]>"
    "[-]>[-]>[-]>[-]>[-]>[-]<<<<<<<<>++++++++++<[->-[>+>>]>[+[<+>-]>+>>]<<<<<]>[-]>>>++++++++"
    "++<[->-[>+>>]>[+[<+>-]>+>>]<<<<<]>[-]>>[>++++++[<++++++++>-]<.<<+>+>[-]]<[<[>-<-]++++++["
    ">++++++++<-]>.[-]]<<++++++[<++++++++>-]<.[-]<<<><<<<<<";

static const char BF_D3_LOOP_HEAD[] =
    "<>[-]<<[-]>[>+<<+>-]>[<+>-]<><[-]>[-]<<<<<[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-][-]>[-]<<<<<"
    "[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-]<<>>[-]>[-]<<[>[-]<<[>>+>+<<<-]>>[<<+>>-]+>[[-]<-<<->>"
    ">]<<-]<[-]>>[<<+>>-]<<[[-]>[-]<<<<<[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-][-]>[-]<<<<[>>>+>+<"
    "<<<-]>>>>[<<<<+>>>>-]<<>[<+>-]<>[-]<<<<<[-]>>>>[>+<<<<<+>>>>-]>[<+>-]<><[-]>[-]<<<<<[>>>"
    ">+>+<<<<<-]>>>>>[<<<<<+>>>>>-]";

static const char BF_D3_TAIL[] =
    "<<>>[-]>[-]<<<[>>[-]<[>+>+<<-]>[<+>-]+>[[-]<-<->>]<<<-]>>[<<+>>-]<<[>>[-]>[-]<<<<<<<[>>>"
    ">>>+>+<<<<<<<-]>>>>>>>[<<<<<<<+>>>>>>>-][-]>[-]<<<<<[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-]<<"
    ">[<+>-]<>[-]<<<<<<<[-]>>>>>>[>+<<<<<<<+>>>>>>-]>[<+>-]<><<<[-]][-]>[-]<<<<<[>>>>+>+<<<<<"
    "-]>>>>>[<<<<<+>>>>>-][-]>[-]<<<<<[>>>>+>+<<<<<-]>>>>>[<<<<<+>>>>>-]<<>>[-]>[-]<<[>[-]<<["
    ">>+>+<<<-]>>[<<+>>-]+>[[-]<-<<->>>]<<-]<[-]>>[<<+>>-]<<][-]>[-]>[-]<<<<<<[>>>>>+>+<<<<<<"
    "-]>>>>>>[<<<<<<+>>>>>>-]<<>>[-]>[-]>[-]>[-]>[-]>[-]>[-]>[-]<<<<<<<<>++++++++++<[->-[>+>>"
    "]>[+[<+>-]>+>>]<<<<<]>[-]>>>++++++++++<[->-[>+>>]>[+[<+>-]>+>>]<<<<<]>[-]>>[>++++++[<+++"
    "+++++>-]<.<<+>+>[-]]<[<[>-<-]++++++[>++++++++<-]>.[-]]<<++++++[<++++++++>-]<.[-]<<<><<<<"
    "<<";

/* Factors offset = a*b + c with a + b + |c| smallest, searching the pairs BF-it searches
 * (a and b walk towards each other from 2 and offset/2), first minimum kept. */
static void bf_loop_factors(int64_t offset, int64_t* a_out, int64_t* b_out, int64_t* c_out) {
    int64_t best_a = offset, best_b = 1, best_c = 0, best_sum = offset + 1;
    int64_t left = 1, right = offset / 2 - 1;
    while (right >= left) {
        int64_t a = left + 1, b = right + 1, c = offset - a * b;
        int64_t sum = a + b + (c < 0 ? -c : c);
        if (sum < best_sum) {
            best_a = a;
            best_b = b;
            best_c = c;
            best_sum = sum;
        }
        if (a * b > offset) right--;
        else left++;
    }
    *a_out = best_a;
    *b_out = best_b;
    *c_out = best_c;
}

void bf_set_cell_value(TextBuf* out, int64_t new_value, int64_t previous_value, int zero_next) {
    int64_t offset = new_value - previous_value;
    char step = offset > 0 ? '+' : '-';
    int negative = offset < 0;
    if (negative) offset = -offset;
    int64_t a, b, c;
    bf_loop_factors(offset, &a, &b, &c);
    int64_t abs_b = b < 0 ? -b : b, abs_c = c < 0 ? -c : c;
    /* ">" [ "[-]" ] "+"*a "[<" step*|b| ">-]" "<" extra*|c| */
    int64_t looped_len = 1 + (zero_next ? 3 : 0) + a + 2 + abs_b + 3 + 1 + abs_c;
    if (offset <= looped_len) {
        textbuf_append_repeat(out, step, (size_t)offset);
        return;
    }
    int64_t signed_c = negative ? -c : c;
    textbuf_append_char(out, '>');
    if (zero_next) textbuf_append(out, "[-]");
    textbuf_append_repeat(out, '+', (size_t)a);
    textbuf_append(out, "[<");
    textbuf_append_repeat(out, step, (size_t)abs_b);
    textbuf_append(out, ">-]<");
    textbuf_append_repeat(out, signed_c > 0 ? '+' : '-', (size_t)abs_c);
}

/* A literal evaluated into the current cell; the pointer moves to the next free cell. */
static void bf_literal(TextBuf* out, int64_t value) {
    textbuf_append(out, "[-]");
    bf_set_cell_value(out, value, 0, 1);
    textbuf_append_char(out, '>');
}

void bf_compile_print_word(TextBuf* out, const char* word, size_t len) {
    /* main's frame starts one cell in; print() clears its character and counter cells, then
     * steps the character cell from one code to the next. */
    textbuf_append(out, ">[-]>[-]<");
    int64_t prev = 0;
    for (size_t i = 0; i < len; i++) {
        int64_t cur = (unsigned char)word[i];
        bf_set_cell_value(out, cur, prev, 0);
        textbuf_append_char(out, '.');
        prev = cur;
    }
    textbuf_append_char(out, '<');
}

static void bf_compile_loop_head(TextBuf* out, int64_t target, int64_t x, int64_t y) {
    textbuf_append(out, BF_MAIN_HEAD);
    bf_literal(out, target);
    textbuf_append(out, BF_AFTER_TARGET);
    bf_literal(out, x);
    textbuf_append(out, BF_AFTER_X);
    bf_literal(out, y);
}

void bf_compile_sum_loop(TextBuf* out, int64_t target, int64_t x, int64_t y) {
    bf_compile_loop_head(out, target, x, y);
    textbuf_append(out, BF_D2_TAIL);
}

void bf_compile_conditional_loop(TextBuf* out, int64_t target, int64_t x, int64_t y, int64_t conditional) {
    bf_compile_loop_head(out, target, x, y);
    textbuf_append(out, BF_D3_LOOP_HEAD);
    bf_literal(out, conditional);
    textbuf_append(out, BF_D3_TAIL);
}

int bf_loop_result(int64_t target, int64_t x, int64_t y, int64_t conditional, int has_conditional, int* acc_out) {
    unsigned t = (unsigned)(target & 255), ux = (unsigned)(x & 255), uy = (unsigned)(y & 255);
    unsigned uc = (unsigned)(conditional & 255), acc = 0;
    for (int round = 0; round <= 256; round++) {
        if (!(acc < t)) {
            if (acc_out) *acc_out = (int)acc;
            return 1;
        }
        acc = (acc + ux) & 255;
        if (!has_conditional || acc > uc) acc = (acc + uy) & 255;
    }
    return 0;
}
