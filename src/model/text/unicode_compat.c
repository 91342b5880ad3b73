/* The Unicode differences between the `tokenizers` library and PCRE2 / utf8proc (see
 * unicode_compat.h). */
#include "model/text/unicode_compat.h"

enum { COMPAT_OTHER, COMPAT_LETTER, COMPAT_NUMBER };

typedef struct {
    uint32_t lo, hi;
    int cls;
} CompatRange;

/* Code points whose class under the library's regexes (letter \p{L}, number \p{N}, or
 * neither and not \s) differs from PCRE2 10.42's: Unicode 15 and 16 additions, and U+180E
 * (a format character since Unicode 6.3, still horizontal space to PCRE2). */
static const CompatRange REGEX_RANGES[] = {
    {0x180E, 0x180E, COMPAT_OTHER},    {0x1C89, 0x1C8A, COMPAT_LETTER},   {0xA7CB, 0xA7CD, COMPAT_LETTER},
    {0xA7DA, 0xA7DC, COMPAT_LETTER},   {0x105C0, 0x105F3, COMPAT_LETTER}, {0x10D40, 0x10D49, COMPAT_NUMBER},
    {0x10D4A, 0x10D65, COMPAT_LETTER}, {0x10D6F, 0x10D85, COMPAT_LETTER}, {0x10EC2, 0x10EC4, COMPAT_LETTER},
    {0x1123F, 0x11240, COMPAT_LETTER}, {0x11380, 0x11389, COMPAT_LETTER}, {0x1138B, 0x1138B, COMPAT_LETTER},
    {0x1138E, 0x1138E, COMPAT_LETTER}, {0x11390, 0x113B5, COMPAT_LETTER}, {0x113B7, 0x113B7, COMPAT_LETTER},
    {0x113D1, 0x113D1, COMPAT_LETTER}, {0x113D3, 0x113D3, COMPAT_LETTER}, {0x116D0, 0x116E3, COMPAT_NUMBER},
    {0x11BC0, 0x11BE0, COMPAT_LETTER}, {0x11BF0, 0x11BF9, COMPAT_NUMBER}, {0x11F02, 0x11F02, COMPAT_LETTER},
    {0x11F04, 0x11F10, COMPAT_LETTER}, {0x11F12, 0x11F33, COMPAT_LETTER}, {0x11F50, 0x11F59, COMPAT_NUMBER},
    {0x1342F, 0x1342F, COMPAT_LETTER}, {0x13441, 0x13446, COMPAT_LETTER}, {0x13460, 0x143FA, COMPAT_LETTER},
    {0x16100, 0x1611D, COMPAT_LETTER}, {0x16130, 0x16139, COMPAT_NUMBER}, {0x16D40, 0x16D6C, COMPAT_LETTER},
    {0x16D70, 0x16D79, COMPAT_NUMBER}, {0x18CFF, 0x18CFF, COMPAT_LETTER}, {0x1B132, 0x1B132, COMPAT_LETTER},
    {0x1B155, 0x1B155, COMPAT_LETTER}, {0x1CCF0, 0x1CCF9, COMPAT_NUMBER}, {0x1D2C0, 0x1D2D3, COMPAT_NUMBER},
    {0x1DF25, 0x1DF2A, COMPAT_LETTER}, {0x1E030, 0x1E06D, COMPAT_LETTER}, {0x1E4D0, 0x1E4EB, COMPAT_LETTER},
    {0x1E4F0, 0x1E4F9, COMPAT_NUMBER}, {0x1E5D0, 0x1E5ED, COMPAT_LETTER}, {0x1E5F0, 0x1E5F0, COMPAT_LETTER},
    {0x1E5F1, 0x1E5FA, COMPAT_NUMBER}, {0x2B739, 0x2B739, COMPAT_LETTER}, {0x2EBF0, 0x2EE5D, COMPAT_LETTER},
    {0x31350, 0x323AF, COMPAT_LETTER},
};

/* Characters the library's NFC data predates: combining marks of Unicode 11 to 15 (nonzero
 * combining class to utf8proc) and the Dives Akuru pair U+11935 U+11930 that utf8proc
 * composes to U+11938. */
static const CompatRange NFC_RANGES[] = {
    {0x7FD, 0x7FD, 0},     {0x898, 0x89F, 0},     {0x8CA, 0x8D3, 0},     {0x9FE, 0x9FE, 0},     {0xC3C, 0xC3C, 0},
    {0xD3B, 0xD3C, 0},     {0xEBA, 0xEBA, 0},     {0x1715, 0x1715, 0},   {0x1ABF, 0x1ACE, 0},   {0x1DF6, 0x1DFA, 0},
    {0xA82C, 0xA82C, 0},   {0x10D24, 0x10D27, 0}, {0x10EAB, 0x10EAC, 0}, {0x10EFD, 0x10EFF, 0}, {0x10F46, 0x10F50, 0},
    {0x10F82, 0x10F85, 0}, {0x11070, 0x11070, 0}, {0x1133B, 0x1133B, 0}, {0x1145E, 0x1145E, 0}, {0x11839, 0x1183A, 0},
    {0x11930, 0x11930, 0}, {0x11935, 0x11935, 0}, {0x1193D, 0x1193E, 0}, {0x11943, 0x11943, 0}, {0x119E0, 0x119E0, 0},
    {0x11A34, 0x11A34, 0}, {0x11A47, 0x11A47, 0}, {0x11A99, 0x11A99, 0}, {0x11D42, 0x11D42, 0}, {0x11D44, 0x11D45, 0},
    {0x11D97, 0x11D97, 0}, {0x11F41, 0x11F42, 0}, {0x16FF0, 0x16FF1, 0}, {0x1E08F, 0x1E08F, 0}, {0x1E130, 0x1E136, 0},
    {0x1E2AE, 0x1E2AE, 0}, {0x1E2EC, 0x1E2EF, 0}, {0x1E4EC, 0x1E4EF, 0},
};

static const CompatRange* range_find(const CompatRange* r, int n, uint32_t cp) {
    if (cp < r[0].lo || cp > r[n - 1].hi) return 0;
    int a = 0, b = n - 1;
    while (a <= b) {
        int m = (a + b) / 2;
        if (cp < r[m].lo) b = m - 1;
        else if (cp > r[m].hi) a = m + 1;
        else return &r[m];
    }
    return 0;
}

uint32_t ucompat_regex_stand_in(uint32_t cp) {
    const CompatRange* r = range_find(REGEX_RANGES, (int)(sizeof REGEX_RANGES / sizeof *REGEX_RANGES), cp);
    if (!r) return 0;
    int len = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    /* By UTF-8 length: a letter (ª, 一, 𠀀), a number (², ①, 𝟎), a format character (U+00AD,
     * U+200B, U+E0001), each classified alike by every Unicode version since 6.3. */
    static const uint32_t STAND_IN[3][3] = {
        {0x00AD, 0x200B, 0xE0001}, {0x00AA, 0x4E00, 0x20000}, {0x00B2, 0x2460, 0x1D7CE}};
    return STAND_IN[r->cls][len - 2];
}

int ucompat_nfc_opaque(uint32_t cp) {
    return range_find(NFC_RANGES, (int)(sizeof NFC_RANGES / sizeof *NFC_RANGES), cp) != 0;
}
