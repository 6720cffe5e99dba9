/* test_text.c - unit tests for out/text.c: the target's strings (symbol
 * names, thread names, command lines) made into text every writer can
 * print: well-formed UTF-8 kept, anything else replaced, and JSON strings
 * any parser accepts. */
#include "tests/unit/unit.h"
#include "out/text.h"

UNIT_MAIN()

static int len_of(const char *s) { return text__utf8_len((const unsigned char *)s); }

TEST(utf8_lengths)
{
    CHECK_EQ_INT(len_of("a"), 1);
    CHECK_EQ_INT(len_of("\x1b"), 1);           /* ASCII, if not printable */
    CHECK_EQ_INT(len_of("\xc3\xa9"), 2);       /* é */
    CHECK_EQ_INT(len_of("\xe2\x82\xac"), 3);   /* € */
    CHECK_EQ_INT(len_of("\xf0\x9f\x94\xa5"), 4); /* U+1F525 */
    CHECK_EQ_INT(len_of("\xff"), 0);
    CHECK_EQ_INT(len_of("\xc0\xaf"), 0);         /* overlong '/' */
    CHECK_EQ_INT(len_of("\xe0\x80\xaf"), 0);     /* overlong, 3 bytes */
    CHECK_EQ_INT(len_of("\xf0\x80\x80\xaf"), 0); /* overlong, 4 bytes */
    CHECK_EQ_INT(len_of("\xed\xa0\x80"), 0);     /* a surrogate, U+D800 */
    CHECK_EQ_INT(len_of("\xf4\x90\x80\x80"), 0); /* U+110000 */
    CHECK_EQ_INT(len_of("\xf5\x80\x80\x80"), 0);
    CHECK_EQ_INT(len_of("\xe2\x82"), 0);         /* cut short by the end */
    CHECK_EQ_INT(len_of("\x80"), 0);             /* a continuation alone */
}

static void cleaned(const char *in, const char *want)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", in);
    text__clean(buf);
    if (strcmp(buf, want) != 0)
        UNIT_FAIL("\"%s\" cleaned is \"%s\", expected \"%s\"", in, buf, want);
}

TEST(clean)
{
    cleaned("Main.$wfib", "Main.$wfib");
    cleaned("GHC.Base.<>", "GHC.Base.<>");
    cleaned("std::vector<int, std::allocator<int> >::push_back(int const&)",
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
    cleaned("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
    /* A terminal's escape (sets its title), a newline, a tab, DEL. */
    cleaned("a\x1b]0;X\x07z", "a?]0;X?z");
    cleaned("new\nline\r\tx\x7f", "new?line??x?");
    /* C1 controls, as UTF-8 (U+009B is a CSI to some terminals). */
    cleaned("a\xc2\x9b" "1m", "a?1m");
    cleaned("\xc2\xa0", "\xc2\xa0"); /* U+00A0 is text */
    /* Not UTF-8: one '?' per byte; a whole bad sequence is not eaten. */
    cleaned("bad\xffutf", "bad?utf");
    cleaned("\xed\xa0\x80", "???");
    cleaned("\xe2\x82z", "??z");
    /* U+FFFE and U+FFFF, which XML cannot hold; U+FFFD stays. */
    cleaned("\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd", "??\xef\xbf\xbd");
    cleaned("", "");
}

static void as_json(const char *in, const char *want)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    text__json(f, in);
    fclose(f);
    if (strcmp(buf, want) != 0) {
        char why[256];
        snprintf(why, sizeof why, "%s", buf);
        free(buf);
        UNIT_FAIL("JSON of \"%s\" is %s, expected %s", in, why, want);
    }
    free(buf);
}

TEST(json_strings)
{
    as_json("Main.$wfib", "\"Main.$wfib\"");
    as_json("a\"b\\c", "\"a\\\"b\\\\c\"");
    as_json("t\x01\n", "\"t\\u0001\\u000a\"");
    /* Text as it is (before, each byte of é was written as a code point
     * of its own: \u00c3\u00a9). */
    as_json("caf\xc3\xa9 \xf0\x9f\x94\xa5", "\"caf\xc3\xa9 \xf0\x9f\x94\xa5\"");
    as_json("bad\xff\xed\xa0\x80", "\"bad\\ufffd\\ufffd\\ufffd\\ufffd\"");
    as_json(NULL, "\"\"");
}
