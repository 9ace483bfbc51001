/*
 * manifest.c - the checkpoint manifest as text: escaping, tokens and the
 * parser (pems_manifest_parse: no I/O, no global state; the fuzz target
 * tests/fuzz/fuzz_manifest.c calls it).  Format: docs/checkpoint.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"
#include "crc32c.h"

/* ---- manifest text ---- */

void pems_mf_put_esc(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!*p)
		fputs("%00", f);	/* an empty string is one %00 */
	for (; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '%')
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode one escaped token of @n bytes; NULL when malformed. */
static char *unesc(const char *s, size_t n)
{
	char *o = malloc(n + 1), *d = o;
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			*d++ = s[i];
			continue;
		}
		if (i + 2 >= n) {
			free(o);
			return NULL;
		}
		{
			int a = hexval(s[i + 1]), b = hexval(s[i + 2]);

			if (a < 0 || b < 0 || (a == 0 && b == 0 && n != 3)) {
				free(o);
				return NULL;
			}
			if (a || b)
				*d++ = (char)(a * 16 + b);
			i += 2;
		}
	}
	*d = 0;
	return o;
}

struct toks {
	const char *t[16];
	size_t n[16];
	unsigned count;
};

/* Split a line into at most 16 space-separated tokens; false if more. */
static bool split(const char *line, size_t len, struct toks *tk)
{
	size_t i = 0;

	tk->count = 0;
	while (i < len) {
		size_t j = i;

		while (j < len && line[j] != ' ')
			j++;
		if (j == i || tk->count == 16)
			return false;	/* empty token (double space) or too many */
		tk->t[tk->count] = line + i;
		tk->n[tk->count++] = j - i;
		i = j + 1;
		if (j < len && i == len)
			return false;	/* trailing space */
	}
	return tk->count > 0;
}

static bool tok_is(const struct toks *tk, unsigned i, const char *s)
{
	return i < tk->count && tk->n[i] == strlen(s) && !memcmp(tk->t[i], s, tk->n[i]);
}

static bool tok_u64(const struct toks *tk, unsigned i, int base, uint64_t *out)
{
	char buf[32], *end;

	if (i >= tk->count || tk->n[i] == 0 || tk->n[i] >= sizeof(buf))
		return false;
	memcpy(buf, tk->t[i], tk->n[i]);
	buf[tk->n[i]] = 0;
	if (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
		return false;
	errno = 0;
	*out = strtoull(buf, &end, base);
	return !errno && !*end;
}

static bool tok_i64(const struct toks *tk, unsigned i, int64_t *out)
{
	uint64_t u;
	bool neg = i < tk->count && tk->n[i] > 1 && tk->t[i][0] == '-';
	struct toks t2 = *tk;

	if (neg) {
		t2.t[i]++;
		t2.n[i]--;
	}
	if (!tok_u64(&t2, i, 10, &u) || u > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)u : (int64_t)u;
	return true;
}

static bool tok_uint(const struct toks *tk, unsigned i, unsigned max, unsigned *out)
{
	uint64_t u;

	if (!tok_u64(tk, i, 10, &u) || u > max)
		return false;
	*out = (unsigned)u;
	return true;
}

static bool tok_str(const struct toks *tk, unsigned i, char **out)
{
	if (i >= tk->count || *out)
		return false;	/* missing, or given twice */
	*out = unesc(tk->t[i], tk->n[i]);
	return *out != NULL;
}

static bool push_str(char ***arr, unsigned *n, const struct toks *tk, unsigned i)
{
	char **a, *s = NULL;

	if (*n >= 1u << 16 || !tok_str(tk, i, &s))
		return false;
	a = realloc(*arr, (*n + 1) * sizeof(*a));
	if (!a) {
		free(s);
		return false;
	}
	a[(*n)++] = s;
	*arr = a;
	return true;
}

void pems_manifest_free(struct pems_manifest *m)
{
	unsigned i;

	for (i = 0; i < m->argc; i++)
		free(m->argv[i]);
	for (i = 0; i < m->envc; i++)
		free(m->envp[i]);
	for (i = 0; i < m->ndirs && m->tmp; i++)
		free(m->tmp[i]);
	for (i = 0; i < m->nfiles; i++)
		free(m->files[i].path);
	for (i = 0; i < m->nmaps; i++)
		free(m->maps[i].path);
	for (i = 0; i < m->ncleanup; i++)
		free(m->cleanup[i]);
	free(m->argv);
	free(m->envp);
	free(m->tmp);
	free(m->files);
	free(m->maps);
	free(m->cleanup);
	free(m->exe);
	free(m->cwd);
	free(m->dir);
	free(m->state);
	memset(m, 0, sizeof(*m));
}

static bool parse_config(struct pems_manifest *m, const struct toks *tk)
{
	/* !m->tmp first: a second config line must not change ndirs under
	 * the tmp array of the first (found by tests/fuzz/fuzz_manifest.c) */
	return !m->tmp && tk->count == 12 && tok_uint(tk, 1, 1u << 30, &m->v) &&
	       tok_uint(tk, 2, 64, &m->k) && tok_uint(tk, 3, 1u << 20, &m->p) &&
	       tok_uint(tk, 4, 2, &m->io) && tok_uint(tk, 5, PEMS_MAX_TMP, &m->ndirs) &&
	       m->ndirs >= 1 && tok_u64(tk, 6, 10, &m->mu) && tok_u64(tk, 7, 10, &m->mem) &&
	       tok_u64(tk, 8, 10, &m->stack) && tok_u64(tk, 9, 10, &m->msg_mem) &&
	       tok_u64(tk, 10, 10, &m->chunk) && tok_uint(tk, 11, PEMS_NLOGS - 1, &m->wlog) &&
	       (m->tmp = calloc(m->ndirs, sizeof(char *))) != NULL;
}

static bool parse_file(struct pems_manifest *m, const struct toks *tk)
{
	struct pems_mf_file f = { 0 }, *a;
	uint64_t hc, tc;
	unsigned h, fl, dfd, bfd, dir;

	if (tk->count != 11 || !tok_uint(tk, 1, MAXF - 1, &h) ||
	    !tok_uint(tk, 2, INT32_MAX, &fl) || !tok_uint(tk, 3, 1u << 20, &dfd) ||
	    !tok_uint(tk, 4, 1u << 20, &bfd) || !tok_uint(tk, 5, 1, &dir) ||
	    !tok_u64(tk, 6, 10, &f.size) || !tok_i64(tk, 7, &f.mtime_ns) ||
	    !tok_u64(tk, 8, 16, &hc) || hc > UINT32_MAX || !tok_u64(tk, 9, 16, &tc) ||
	    tc > UINT32_MAX || m->nfiles >= MAXF || !tok_str(tk, 10, &f.path))
		return false;
	f.h = (int)h;
	f.flags = (int)fl;
	f.dfd = (int)dfd;
	f.bfd = (int)bfd;
	f.direct = dir;
	f.head_crc = (uint32_t)hc;
	f.tail_crc = (uint32_t)tc;
	a = realloc(m->files, (m->nfiles + 1) * sizeof(*a));
	if (!a) {
		free(f.path);
		return false;
	}
	a[m->nfiles++] = f;
	m->files = a;
	return true;
}

static bool parse_map(struct pems_manifest *m, const struct toks *tk)
{
	struct pems_mf_map x = { 0 }, *a;

	if (tk->count != 4 || m->nmaps >= 4096 || !tok_u64(tk, 1, 10, &x.size) ||
	    !tok_i64(tk, 2, &x.mtime_ns) || !tok_str(tk, 3, &x.path))
		return false;
	a = realloc(m->maps, (m->nmaps + 1) * sizeof(*a));
	if (!a) {
		free(x.path);
		return false;
	}
	a[m->nmaps++] = x;
	m->maps = a;
	return true;
}

static bool parse_line(struct pems_manifest *m, const struct toks *tk, unsigned *seen)
{
	unsigned i;
	uint64_t u;

	if (tok_is(tk, 0, "superstep"))
		return tk->count == 3 && tok_u64(tk, 1, 10, &m->superstep) &&
		       tok_u64(tk, 2, 10, &m->supersteps) && (*seen |= 1);
	if (tok_is(tk, 0, "run"))
		return tk->count == 2 && tok_uint(tk, 1, 1u << 20, &m->run);
	if (tok_is(tk, 0, "exe"))
		return tk->count == 2 && tok_str(tk, 1, &m->exe) && (*seen |= 2);
	if (tok_is(tk, 0, "cwd"))
		return tk->count == 2 && tok_str(tk, 1, &m->cwd) && (*seen |= 4);
	if (tok_is(tk, 0, "dir"))
		return tk->count == 2 && tok_str(tk, 1, &m->dir) && (*seen |= 8);
	if (tok_is(tk, 0, "arg"))
		return tk->count == 2 && push_str(&m->argv, &m->argc, tk, 1);
	if (tok_is(tk, 0, "env"))
		return tk->count == 2 && push_str(&m->envp, &m->envc, tk, 1);
	if (tok_is(tk, 0, "envsize"))
		return tk->count == 4 && tok_uint(tk, 1, 1u << 20, &m->env_count) &&
		       m->env_count > 0 && tok_u64(tk, 2, 10, &m->env_bytes) &&
		       m->env_bytes <= (64u << 20) && tok_uint(tk, 3, 1, &i) &&
		       (m->launched = i, *seen |= 128);
	if (tok_is(tk, 0, "config"))
		return parse_config(m, tk) && (*seen |= 16);
	if (tok_is(tk, 0, "tmp"))
		return tk->count == 3 && m->tmp && tok_uint(tk, 1, m->ndirs - 1, &i) &&
		       tok_str(tk, 2, &m->tmp[i]);
	if (tok_is(tk, 0, "layout")) {
		if (tk->count != PEMS_MF_LAYOUT + 1)
			return false;
		for (i = 0; i < PEMS_MF_LAYOUT; i++)
			if (!tok_u64(tk, i + 1, 16, &m->layout[i]))
				return false;
		*seen |= 32;
		return true;
	}
	if (tok_is(tk, 0, "file"))
		return parse_file(m, tk);
	if (tok_is(tk, 0, "map"))
		return parse_map(m, tk);
	if (tok_is(tk, 0, "cleanup"))
		return tk->count == 2 && push_str(&m->cleanup, &m->ncleanup, tk, 1);
	if (tok_is(tk, 0, "state"))
		return tk->count == 5 && tok_str(tk, 1, &m->state) &&
		       tok_u64(tk, 2, 10, &m->state_size) && tok_u64(tk, 3, 16, &u) &&
		       u <= UINT32_MAX && (m->state_crc = (uint32_t)u, true) &&
		       tok_uint(tk, 4, PEMS_NLOGS - 1, &m->rlog) && (*seen |= 64);
	return false;
}

static int bad(char *err, size_t errlen, int rc, const char *why, unsigned line)
{
	if (err && errlen && line)
		snprintf(err, errlen, "%s (line %u)", why, line);
	else if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return rc;
}

int pems_manifest_parse(const char *text, size_t len, struct pems_manifest *m,
			char *err, size_t errlen)
{
	static const char head[] = "pems-checkpoint 1\n";
	const char *end, *p, *last;
	unsigned line = 1, seen = 0, i;
	struct toks tk;
	uint64_t crc;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	if (len < sizeof(head) - 1 || memcmp(text, head, sizeof(head) - 1))
		return bad(err, errlen, -EINVAL, "not a pems checkpoint manifest", 1);
	/* the last line is "crc32c XXXXXXXX\n" over everything before it */
	if (len < sizeof(head) - 1 + 16 || text[len - 1] != '\n' ||
	    memcmp(text + len - 16, "crc32c ", 7))
		return bad(err, errlen, -EINVAL, "truncated: no crc32c line at the end", 0);
	last = text + len - 16;
	{
		struct toks c;

		if (!split(last, 15, &c) || c.count != 2 || c.n[1] != 8 || !tok_u64(&c, 1, 16, &crc))
			return bad(err, errlen, -EINVAL, "malformed crc32c line", 0);
	}
	if (pems_crc32c(0, text, (size_t)(last - text)) != (uint32_t)crc)
		return bad(err, errlen, -EBADMSG, "checksum mismatch: the manifest is corrupt", 0);
	m->version = PEMS_MF_VERSION;
	for (p = text + sizeof(head) - 1; p < last; p = end + 1) {
		line++;
		end = memchr(p, '\n', (size_t)(last - p));
		if (!end || memchr(p, 0, (size_t)(end - p)) || !split(p, (size_t)(end - p), &tk) ||
		    !parse_line(m, &tk, &seen)) {
			rc = bad(err, errlen, errno == ENOMEM ? -ENOMEM : -EINVAL, "malformed line", line);
			goto fail;
		}
	}
	if (seen != 255 || !m->argc) {
		rc = bad(err, errlen, -EINVAL, "a required field is missing", line);
		goto fail;
	}
	for (i = 0; i < m->ndirs; i++)
		if (!m->tmp[i]) {
			rc = bad(err, errlen, -EINVAL, "a scratch dir is missing", line);
			goto fail;
		}
	return 0;
fail:
	pems_manifest_free(m);
	return rc;
}
