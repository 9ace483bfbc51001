# sort_text_cases.awk - random lines that exercise GNU sort's keys:
# numbers (signs, leading zeros, decimals, junk), words with case,
# punctuation, control bytes, version-like strings, blanks, separators,
# empty and repeated lines.  awk -v seed=S -v n=N -f sort_text_cases.awk
function pick(s,   a, k) { k = split(s, a, "|"); return a[int(rand() * k) + 1] }
function num(   s, d) {
	if (rand() < 0.1) return pick("|-|.|-0|0|00|-.0|+5|1e3|0x10|inf|-inf|nan| 5|\t-3|1,000")
	s = (rand() < 0.3 ? "-" : "") substr("00", 1, int(rand() * 3)) sprintf("%.0f", int(rand() * 10 ^ int(rand() * 15)))
	if (rand() < 0.4) s = s "." int(rand() * 1000) substr("00", 1, int(rand() * 3))
	if (rand() < 0.1) s = s "abc"
	return s
}
function word(   s, i, L) {
	if (rand() < 0.2) return pick("a|A|b|B|ab|Ab|aB|a-b|a b|z|~|Z")
	if (rand() < 0.15) return pick("1.2.3|1.10|1.9|v1.0~rc1|v1.0|foo-1.2.tar.gz|foo-1.10.tar.gz|.|..|.hidden|a1b2|a01|a1")
	L = int(rand() * 9); s = ""
	for (i = 0; i < L; i++) s = s substr("abcABC xyz-_.,;:\t!~\001\177", int(rand() * 24) + 1, 1)
	return s
}
BEGIN {
	srand(seed)
	for (i = 0; i < n; i++) {
		c = rand()
		if (c < 0.05) { line[i] = ""; continue }
		if (c < 0.1 && i > 0) { line[i] = line[int(rand() * i)]; continue }
		sep = pick(",| |\t|, |  ")
		k = int(rand() * 5) + 1; s = ""
		for (j = 0; j < k; j++) s = s (j ? sep : "") (rand() < 0.5 ? num() : word())
		if (rand() < 0.05) s = "  " s
		line[i] = s
	}
	for (i = 0; i < n; i++) printf "%s%s", line[i], (i < n - 1 || seed % 2 ? "\n" : "")
}
