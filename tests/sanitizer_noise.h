/*
 * sanitizer_noise.h - tests that compare stderr exactly must ignore what
 * ASan prints about pems' stack switching (a VP's stack lives in its
 * context; the switches are annotated, but ASan still warns once).
 */
#ifndef PEMS_SANITIZER_NOISE_H
#define PEMS_SANITIZER_NOISE_H

#include <stdbool.h>
#include <string.h>

/* Drop the lines a sanitizer prints about makecontext/swapcontext (ASan
 * builds: "==123==WARNING: ASan doesn't fully support ...", "False
 * positive error reports may follow", "For details see ...") from @s. */
static inline void strip_sanitizer_noise(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		char *nl = strchr(r, '\n');
		size_t len = nl ? (size_t)(nl - r) + 1 : strlen(r);
		bool noise = (r[0] == '=' && r[1] == '=' && strstr(r, "==WARNING: ASan") &&
			      strstr(r, "==WARNING: ASan") < r + len) ||
			     !strncmp(r, "False positive error reports may follow", 39) ||
			     !strncmp(r, "For details see https://github.com/google/sanitizers/issues/189", 62);

		if (!noise) {
			memmove(w, r, len);
			w += len;
		}
		r += len;
	}
	*w = '\0';
}

#endif
