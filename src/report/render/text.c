/*
 * text.c - JSON strings and CSV fields, written once for every output.
 *
 * JSON text must be UTF-8 (RFC 8259, section 8.1).  Names come from
 * programs and debug info and are usually UTF-8, sometimes not (a Latin-1
 * source path): valid sequences are copied as they are, so a reader sees
 * the name it expects, and every byte that does not start or continue a
 * valid sequence (overlong forms, surrogates and values past U+10FFFF
 * included) becomes U+FFFD, so the output always parses.
 *
 * Alternatives considered: escaping every non-ASCII byte as \u00XX (the
 * first trace exporter did): that turns UTF-8 "é" into the two characters
 * "Ã©", a wrong name rather than a safe one.
 */
#include <stdint.h>
#include <string.h>

#include "report/render/text.h"

int sp_utf8_len(const unsigned char *p)
{
	uint32_t c;
	int n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

void sp_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*p) {
		int n;

		switch (*p) {
		case '"': fputs("\\\"", out); p++; continue;
		case '\\': fputs("\\\\", out); p++; continue;
		case '\n': fputs("\\n", out); p++; continue;
		case '\t': fputs("\\t", out); p++; continue;
		case '\r': fputs("\\r", out); p++; continue;
		default: break;
		}
		if (*p < 0x20) {
			fprintf(out, "\\u%04x", *p++);
			continue;
		}
		n = sp_utf8_len(p);
		/*
		 * A byte that is not UTF-8 becomes U+FFFD; U+FFFD itself is
		 * written escaped the same way, so that a name read back from a
		 * saved profile (where the reader decoded "\ufffd" into its
		 * bytes) renders to the same bytes again.
		 */
		if (!n || (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] == 0xbd)) {
			fputs("\\ufffd", out);
			p += n ? 3 : 1;
			continue;
		}
		fwrite(p, 1, (size_t)n, out);
		p += n;
	}
	fputc('"', out);
}

void sp_csv_field(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}
