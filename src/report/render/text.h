/*
 * text.h - the text encodings every renderer and the tools share
 * (render/text.c): JSON strings and CSV fields.  Private to src/report,
 * src/read and tools/syncprof.
 */
#ifndef SP_REPORT_RENDER_TEXT_H
#define SP_REPORT_RENDER_TEXT_H

#include <stdio.h>

/* Length of the valid UTF-8 sequence at @p (1-4), or 0 (not UTF-8, or
 * the NUL that ends @p): the rule sp_json_string() writes by, and the
 * profile reader reads by. */
int sp_utf8_len(const unsigned char *p);

/* @s as a JSON string (RFC 8259), or null for NULL.  Valid UTF-8 passes
 * through; bytes that are not valid UTF-8 become U+FFFD, so the output is
 * always valid JSON text; control characters are escaped. */
void sp_json_string(FILE *out, const char *s);
/* @s as a CSV field (RFC 4180): quoted when it holds a comma, quote or
 * line break, quotes doubled; nothing for NULL. */
void sp_csv_field(FILE *out, const char *s);

#endif
