/* Display width of UTF-8 strings: a minimal table (Unicode's East Asian Width W and F, and the
 * common zero-width characters), the same in every locale. */
#include <stdint.h>

#include "util/width.h"

struct range {
    uint32_t lo, hi;
};

static const struct range zero[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD},   {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E},   {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
    {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064},   {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
    {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

static const struct range wide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
    {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4},
    {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
    {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F},
    {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

static int in(const struct range *r, size_t n, uint32_t c)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < r[mid].lo)
            hi = mid;
        else if (c > r[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* The code point at s (its length in *len), or -1 for an ill-formed sequence (length 1). */
static int32_t decode(const unsigned char *s, size_t *len)
{
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    unsigned n = s[0] < 0x80                   ? 1
                 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2
                 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3
                 : s[0] >= 0xF0 && s[0] < 0xF5 ? 4
                                               : 0;
    *len = 1;
    if (!n)
        return -1;
    uint32_t c = n == 1 ? s[0] : s[0] & (0x7F >> n);
    for (unsigned i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        c = c << 6 | (s[i] & 0x3F);
    }
    if (c < min[n] || c > 0x10FFFF || (c >= 0xD800 && c < 0xE000))
        return -1;
    *len = n;
    return (int32_t)c;
}

size_t ptt_display_width(const char *s)
{
    size_t w = 0, len;
    for (const unsigned char *p = (const unsigned char *)s; *p; p += len) {
        int32_t c = decode(p, &len);
        if (c >= 0 && in(zero, sizeof zero / sizeof *zero, (uint32_t)c))
            continue;
        w += c >= 0 && in(wide, sizeof wide / sizeof *wide, (uint32_t)c) ? 2 : 1;
    }
    return w;
}

void ptt_put_padded(FILE *f, const char *s, size_t width)
{
    fputs(s, f);
    for (size_t w = ptt_display_width(s); w < width; w++)
        fputc(' ', f);
}
