/*
 * json_stream.h - a streaming JSON reader that hands over the elements of
 * one top-level array ("rows") one at a time, each as a small tree
 * (json_stream.c).  Private to src/read.
 */
#ifndef SP_READ_JSON_STREAM_H
#define SP_READ_JSON_STREAM_H

#include <stddef.h>
#include <stdint.h>

enum jv_type { JV_NULL, JV_BOOL, JV_INT, JV_DOUBLE, JV_STRING, JV_ARRAY, JV_OBJECT };

/*
 * A JSON value.  Objects and arrays hold their members in @kids (@n of
 * them; an object's members have their @key); strings are NUL-terminated
 * (@n bytes, embedded NULs cut them short for C); integers are @u, with
 * @neg for a leading '-'; numbers with a fraction or an exponent, and
 * integers beyond 64 bits, are JV_DOUBLE with no value kept (nothing in a
 * profile has one).  A NULL pointer counts as a JSON null.
 */
struct jv {
	uint8_t type;
	uint8_t neg;     /* an integer: '-' */
	uint32_t n;
	uint32_t key_len;
	uint32_t key_hash; /* jv_hash() of @key: a filter for lookups */
	const char *key;
	union {
		uint64_t u;
		int b;
		const char *s;
		struct jv *kids;
	};
};

uint32_t jv_hash(const char *s, size_t n);

/* What json-c's accessors did, so the reader keeps its semantics. */
int jv_is(const struct jv *v, enum jv_type t);
/* 1 when @o is an object with member @key (the last one of that name),
 * *@out its value or NULL when that is null; 0 otherwise. */
int jv_get_ex(const struct jv *o, const char *key, const struct jv **out);
size_t jv_len(const struct jv *v);                        /* 0 unless an array */
const struct jv *jv_idx(const struct jv *v, size_t i);    /* NULL: null */
const char *jv_str(const struct jv *v);                   /* NULL unless a string */
int jv_bool(const struct jv *v);                          /* true or a non-zero integer */

struct js;

struct js_handler {
	void *ctx;
	/*
	 * The top-level key "rows" opens an array: @so_far is the top-level
	 * object as read until then.  Return 0 to receive its elements one by
	 * one through row() (they are not kept), 1 to keep the array in the
	 * tree instead, or a negative errno to stop.
	 */
	int (*rows_begin)(void *ctx, const struct jv *so_far);
	/* Element @i of the streamed array; 0 or a negative errno to stop. */
	int (*row)(void *ctx, size_t i, const struct jv *row);
};

/* A reader named @name in its messages; NULL on ENOMEM. */
struct js *js_new(const struct js_handler *h, const char *name, char *err, size_t err_size);
/* Feed @n more bytes; 0, -EINVAL (invalid JSON: the message is in err),
 * or the error a callback returned. */
int js_feed(struct js *s, const char *buf, size_t n);
/* The end of the text: the same, and *@root the top-level value (without
 * a streamed array), valid until js_free(). */
int js_finish(struct js *s, const struct jv **root);
/* Whether an array was streamed. */
int js_streamed(const struct js *s);
void js_free(struct js *s);

#endif
