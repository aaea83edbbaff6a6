/*
 * chakra_args.c -- what a Chakra node recorded of its inputs, in the form
 * the Kineto op mapper (kineto_ops.c) reads. Chakra's PyTorch converter
 * writes a node's IOInfo as Python's str() of the host trace's lists:
 *   shapes "[[8, 2048, 768], [768, 3072]]"
 *   types  "['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)', 'Bool']"
 *   values "[[12, 7, 0, 4096, 2, 'cuda:0'], True, 0.1]"
 * which become a CPU op's "Input Dims" (the shapes as they are), "Input
 * type" (the element type inside Tensor(...)) and "Concrete Inputs" (a
 * scalar's value as text, "" for a tensor or a list), as Kineto records
 * them with record_shapes=True.
 */
#include "chakra_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

struct lit {
	const char *p;
	int depth;
};

static void skip(struct lit *L)
{
	while (*L->p == ' ' || *L->p == '\t' || *L->p == '\n' || *L->p == '\r')
		L->p++;
}

static json_t *value(struct lit *L);

static json_t *list(struct lit *L, char close)
{
	json_t *a = json_array();
	if (!a)
		return NULL;
	L->p++;
	skip(L);
	if (*L->p == close) {
		L->p++;
		return a;
	}
	for (;;) {
		json_t *v = value(L);
		if (!v || json_array_append_new(a, v)) {
			json_decref(a);
			return NULL;
		}
		skip(L);
		if (*L->p == ',') {
			L->p++;
			skip(L);
			if (*L->p == close) { /* (1,) */
				L->p++;
				return a;
			}
			continue;
		}
		if (*L->p == close) {
			L->p++;
			return a;
		}
		json_decref(a);
		return NULL;
	}
}

static json_t *string(struct lit *L)
{
	char q = *L->p++;
	const char *s = L->p;
	while (*L->p && *L->p != q) {
		if (*L->p == '\\' && L->p[1])
			L->p++;
		L->p++;
	}
	if (*L->p != q)
		return NULL;
	json_t *v = json_stringn_nocheck(s, (size_t)(L->p - s));
	L->p++;
	return v;
}

static int word(struct lit *L, const char *w)
{
	size_t n = strlen(w);
	if (strncmp(L->p, w, n) || isalnum((unsigned char)L->p[n]) || L->p[n] == '_')
		return 0;
	L->p += n;
	return 1;
}

static json_t *number(struct lit *L)
{
	const char *s = L->p;
	if (*L->p == '-' || *L->p == '+')
		L->p++;
	if (word(L, "inf"))
		return json_real(*s == '-' ? -1e308 : 1e308);
	if (word(L, "nan"))
		return json_null();
	int real = 0;
	while (isdigit((unsigned char)*L->p) || *L->p == '.' || *L->p == 'e' || *L->p == 'E' ||
	       ((*L->p == '-' || *L->p == '+') && (L->p[-1] == 'e' || L->p[-1] == 'E'))) {
		real |= !isdigit((unsigned char)*L->p);
		L->p++;
	}
	if (L->p == s || (L->p == s + 1 && (*s == '-' || *s == '+')))
		return NULL;
	char buf[64];
	size_t n = (size_t)(L->p - s);
	if (n >= sizeof buf)
		return NULL;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	if (!real) {
		long long v = strtoll(buf, &end, 10);
		return *end ? NULL : json_integer(v);
	}
	double d = strtod(buf, &end);
	return *end ? NULL : json_real(d);
}

static json_t *value(struct lit *L)
{
	skip(L);
	if (++L->depth > MAX_DEPTH)
		return NULL;
	json_t *v;
	if (*L->p == '[')
		v = list(L, ']');
	else if (*L->p == '(')
		v = list(L, ')');
	else if (*L->p == '\'' || *L->p == '"')
		v = string(L);
	else if (word(L, "True"))
		v = json_true();
	else if (word(L, "False"))
		v = json_false();
	else if (word(L, "None"))
		v = json_null();
	else
		v = number(L);
	L->depth--;
	return v;
}

json_t *chk_pylit(const char *s)
{
	if (!s)
		return NULL;
	struct lit L = {s, 0};
	json_t *v = value(&L);
	skip(&L);
	if (v && *L.p) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* "Tensor(c10::BFloat16)" -> "c10::BFloat16"; anything else as it is. */
static json_t *elem_type(json_t *t)
{
	const char *s = json_string_value(t);
	if (!s)
		return json_string("");
	size_t n = strlen(s);
	if (n > 8 && !strncmp(s, "Tensor(", 7) && s[n - 1] == ')')
		return json_stringn_nocheck(s + 7, n - 8);
	return json_string(s);
}

/* A scalar as Kineto's "Concrete Inputs" writes it; "" for the rest. */
static json_t *concrete(json_t *v)
{
	char buf[64] = "";
	if (json_is_true(v))
		snprintf(buf, sizeof buf, "True");
	else if (json_is_false(v))
		snprintf(buf, sizeof buf, "False");
	else if (json_is_integer(v))
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
	else if (json_is_string(v))
		return json_string(json_string_value(v));
	else if (json_is_array(v) && json_array_size(v) >= 1 && json_array_size(v) <= 4) {
		/* an int list as Kineto writes one: "[1, 1]" (stride, padding); a bool list: "[True, True, False]"
		   (convolution_backward's output_mask) */
		size_t k = 0, n = 0;
		n += (size_t)snprintf(buf, sizeof buf, "[");
		for (; k < json_array_size(v) && json_is_integer(json_array_get(v, k)); k++)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", k ? ", " : "",
			                      (long long)json_integer_value(json_array_get(v, k)));
		if (k == 0)
			for (; k < json_array_size(v) && json_is_boolean(json_array_get(v, k)); k++)
				n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", k ? ", " : "",
				                      json_is_true(json_array_get(v, k)) ? "True" : "False");
		if (k < json_array_size(v))
			return json_string(""); /* a tensor ([id, storage, offset, ...] ends in a device), or mixed */
		snprintf(buf + n, sizeof buf - n, "]");
	}
	return json_string(buf);
}

json_t *chk_args(const char *shapes, const char *types, const char *values)
{
	json_t *dims = chk_pylit(shapes), *ty = chk_pylit(types), *val = values ? chk_pylit(values) : NULL;
	json_t *args = json_object(), *tl = json_array(), *cl = json_array();
	int ok = json_is_array(dims) && json_is_array(ty) && args && tl && cl;
	for (size_t i = 0; ok && i < json_array_size(ty); i++)
		ok = !json_array_append_new(tl, elem_type(json_array_get(ty, i)));
	for (size_t i = 0; ok && json_is_array(val) && i < json_array_size(val); i++)
		ok = !json_array_append_new(cl, concrete(json_array_get(val, i)));
	if (ok)
		ok = !json_object_set(args, "Input Dims", dims) && !json_object_set(args, "Input type", tl) &&
		     !json_object_set(args, "Concrete Inputs", cl);
	json_decref(dims);
	json_decref(ty);
	json_decref(val);
	json_decref(tl);
	json_decref(cl);
	if (!ok) {
		json_decref(args);
		return NULL;
	}
	return args;
}
