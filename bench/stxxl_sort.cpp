// bench/stxxl_sort.cpp - STXXL 1.4.1 peer for `pems-run sort` (bench/sort.sh).
//
//   stxxl_sort [--format u64|rec100] [--io syscall|linuxaio] MEM SCRATCH IN OUT
//
// Sorts IN (little-endian u64 keys, or 100-byte records ordered by their
// first 10 bytes, memcmp order) into OUT with stxxl::sorter given MEM bytes
// (K/M/G suffixes accepted).  STXXL's run files go to one autogrowing disk
// file SCRATCH/stxxl.disk (O_DIRECT, unlinked on open); if STXXLCFG names a
// config file it is used instead.  STXXL's logs go to SCRATCH too.
//
// I/O outside STXXL is done here: IN is read and OUT written with O_DIRECT
// (buffered if the filesystem refuses it) in 8 MiB chunks by one reader and
// one writer thread, double-buffered, so the disk traffic is the same ~4N
// bytes as pems' sample sort.  MEM covers the sorter, those four chunk
// buffers and a fixed slack, so peak RSS stays under MEM.  The output is
// checked while it is written: sorted, same record count, same
// order-independent checksum as the input.
//
// Prints one line on stdout:
//   algo=sort impl=stxxl format=u64 bytes=N secs=S mbps=MB/s mem=M run_secs=A
//   merge_secs=B run_peak_rss=R1 peak_rss=R2    (one line; RSS in bytes)
// Exit 0 ok, 1 failure (message on stderr), 2 usage error.
// Build: g++ -O2 -fopenmp bench/stxxl_sort.cpp -lstxxl (see bench/sort.sh).
#include <stxxl/sorter>
#include <stxxl/timer>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

const size_t kChunk = 8u << 20;	// bytes per I/O request; multiple of 4 KiB and of 8, not of 100
const size_t kAlign = 4096;

std::string g_tmp;	// partial output to remove on failure

[[noreturn]] void fail(const std::string& what)
{
	fprintf(stderr, "stxxl_sort: error: %s\n", what.c_str());
	if (!g_tmp.empty())
		unlink(g_tmp.c_str());
	exit(1);
}

uint64_t mix64(uint64_t x)	// splitmix64 finalizer
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct u64_cmp {
	bool operator()(uint64_t a, uint64_t b) const { return a < b; }
	uint64_t min_value() const { return 0; }
	uint64_t max_value() const { return UINT64_MAX; }
};

struct rec100 {
	unsigned char b[100];
};

// Sentinels: all-0x00 and all-0xFF keys; a real record with an all-0xFF key
// would collide with max_value (never happens with ascii100/random keys).
struct rec100_cmp {
	bool operator()(const rec100& a, const rec100& b) const { return memcmp(a.b, b.b, 10) < 0; }
	rec100 min_value() const { rec100 r; memset(r.b, 0x00, sizeof r.b); return r; }
	rec100 max_value() const { rec100 r; memset(r.b, 0xff, sizeof r.b); return r; }
};

uint64_t rec_hash(uint64_t k) { return mix64(k); }
uint64_t rec_hash(const rec100& r)
{
	uint64_t h = 0, w;	// chained over 8-byte words of the whole record
	for (size_t i = 0; i + 8 <= sizeof r.b; i += 8) {
		memcpy(&w, r.b + i, 8);
		h = mix64(h ^ w);
	}
	uint32_t t;
	memcpy(&t, r.b + 96, 4);
	return mix64(h ^ t);
}

void* xalloc(size_t n)
{
	void* p = nullptr;
	if (posix_memalign(&p, kAlign, n))
		fail("out of memory allocating I/O buffers");
	return p;
}

// Peak resident set so far (VmHWM), bytes; 0 if unknown.
uint64_t peak_rss()
{
	FILE* f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

// Open with O_DIRECT if the filesystem allows, else buffered.
int open_io(const char* path, int flags, bool* direct)
{
	int fd = open(path, flags | O_DIRECT, 0644);
	*direct = fd >= 0;
	if (fd < 0 && errno == EINVAL)
		fd = open(path, flags, 0644);
	if (fd < 0)
		fail(std::string("cannot open ") + path + ": " + strerror(errno));
	return fd;
}

// A one-slot hand-off between the main thread and an I/O thread.
struct slot {
	std::mutex m;
	std::condition_variable cv;
	bool full = false;
	bool eof = false;
	size_t len = 0;
	char* buf = nullptr;
};

void put(slot& s, size_t len, bool eof)
{
	std::unique_lock<std::mutex> l(s.m);
	s.len = len;
	s.eof = eof;
	s.full = true;
	s.cv.notify_all();
}

void take(slot& s)
{
	std::unique_lock<std::mutex> l(s.m);
	s.cv.wait(l, [&] { return s.full; });
}

void release(slot& s)
{
	std::unique_lock<std::mutex> l(s.m);
	s.full = false;
	s.cv.notify_all();
}

void wait_empty(slot& s)
{
	std::unique_lock<std::mutex> l(s.m);
	s.cv.wait(l, [&] { return !s.full; });
}

// Reader: fills slots 0,1,0,1,... with consecutive chunks of fd.
void reader(int fd, slot* sl, std::atomic<int>* err)
{
	uint64_t off = 0;
	for (unsigned i = 0;; i ^= 1) {
		wait_empty(sl[i]);
		size_t got = 0;
		while (got < kChunk) {
			ssize_t r = pread(fd, sl[i].buf + got, kChunk - got, off + got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				*err = errno;
				put(sl[i], got, true);
				return;
			}
			if (r == 0)
				break;
			got += r;
			if (got % kAlign)	// short read: end of file under O_DIRECT
				break;
		}
		off += got;
		bool eof = got < kChunk;
		put(sl[i], got, eof);
		if (eof)
			return;
	}
}

// Writer: drains slots 0,1,0,1,... to fd; the last chunk is padded to 4 KiB
// for O_DIRECT and the file truncated to its real length by the caller.
void writer(int fd, bool direct, slot* sl, std::atomic<int>* err)
{
	uint64_t off = 0;
	for (unsigned i = 0;; i ^= 1) {
		take(sl[i]);
		size_t len = sl[i].len, n = len;
		if (direct && n % kAlign) {
			memset(sl[i].buf + n, 0, kAlign - n % kAlign);
			n += kAlign - n % kAlign;
		}
		size_t done = 0;
		while (done < n && !*err) {
			ssize_t w = pwrite(fd, sl[i].buf + done, n - done, off + done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				*err = w < 0 ? errno : EIO;
			else
				done += w;
		}
		off += len;
		bool eof = sl[i].eof;
		release(sl[i]);
		if (eof)
			return;
	}
}

template <typename T, typename Cmp>
int run(uint64_t mem, const char* in, const char* out, const char* fmt)
{
	const size_t rs = sizeof(T);
	// MEM = the sorter's budget + our 4 chunk buffers + kSlack for what
	// STXXL and the runtime use beyond the sorter's own accounting (thread
	// stacks, OpenMP, merger bookkeeping: ~20 MiB measured, independent of
	// MEM), so that the process's peak RSS stays below MEM.
	const uint64_t bufs = 4 * (uint64_t)kChunk, kSlack = 24u << 20;
	const uint64_t min_mem = bufs + kSlack + (32u << 20);
	if (mem < min_mem)
		fail("MEM " + std::to_string(mem) + " is too small: need at least " +
		     std::to_string(min_mem >> 20) + " MiB");
	const uint64_t sorter_mem = mem - bufs - kSlack;

	bool in_direct, out_direct;
	int ifd = open_io(in, O_RDONLY, &in_direct);
	struct stat st;
	if (fstat(ifd, &st))
		fail(std::string("cannot stat ") + in + ": " + strerror(errno));
	const uint64_t bytes = st.st_size;
	if (bytes % rs)
		fail(std::string(in) + ": size " + std::to_string(bytes) +
		     " is not a multiple of the record size " + std::to_string(rs));
	std::string tmp = std::string(out) + ".tmp." + std::to_string(getpid());
	int ofd = open_io(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, &out_direct);
	g_tmp = tmp;
	if (!in_direct || !out_direct)
		fprintf(stderr, "stxxl_sort: warning: O_DIRECT refused, using buffered I/O\n");

	slot sl[2];
	for (slot& s : sl)
		s.buf = (char*)xalloc(kChunk + kAlign);
	std::atomic<int> err(0);

	stxxl::timer t_all(true);
	stxxl::sorter<T, Cmp> sorter(Cmp(), sorter_mem);

	// Phase 1: read and push (run formation).  Records may straddle chunk
	// boundaries (100 does not divide 8 MiB): carry the partial one over.
	uint64_t n_in = 0, h_in = 0;
	{
		std::thread rt(reader, ifd, sl, &err);
		T carry;
		size_t carried = 0;
		for (unsigned i = 0;; i ^= 1) {
			take(sl[i]);
			const char* p = sl[i].buf;
			size_t len = sl[i].len;
			if (carried) {
				size_t need = std::min(rs - carried, len);
				memcpy((char*)&carry + carried, p, need);
				carried += need;
				p += need;
				len -= need;
				if (carried == rs) {
					sorter.push(carry);
					h_in += rec_hash(carry);
					n_in++;
					carried = 0;
				}
			}
			for (; len >= rs; p += rs, len -= rs) {
				T v;
				memcpy(&v, p, rs);
				sorter.push(v);
				h_in += rec_hash(v);
				n_in++;
			}
			if (len) {
				memcpy(&carry, p, len);
				carried = len;
			}
			bool eof = sl[i].eof;
			release(sl[i]);
			if (eof)
				break;
		}
		rt.join();
		if (err)
			fail(std::string("reading ") + in + ": " + strerror(err));
		if (n_in * rs != bytes)
			fail(std::string(in) + " changed size while being read");
	}
	close(ifd);
	double run_secs = t_all.seconds();
	uint64_t run_rss = peak_rss();

	// Phase 2: merge and write, checking order and checksum on the way.
	sorter.sort();
	uint64_t n_out = 0, h_out = 0;
	bool sorted = true;
	Cmp cmp;
	{
		std::thread wt(writer, ofd, out_direct, sl, &err);
		T prev = cmp.min_value();
		unsigned i = 0;
		for (;;) {
			wait_empty(sl[i]);
			char* p = sl[i].buf;
			size_t len = 0;
			// Fill a whole chunk except at the end; a record may straddle.
			while (len < kChunk && !sorter.empty()) {
				const T& v = *sorter;
				if (cmp(v, prev))
					sorted = false;
				prev = v;
				h_out += rec_hash(v);
				n_out++;
				size_t room = kChunk - len;
				if (room >= rs) {
					memcpy(p + len, &v, rs);
					len += rs;
				} else {
					memcpy(p + len, &v, room);
					len += room;
					bool eof = false;
					put(sl[i], len, eof);
					i ^= 1;
					wait_empty(sl[i]);
					p = sl[i].buf;
					memcpy(p, (const char*)&v + room, rs - room);
					len = rs - room;
				}
				++sorter;
			}
			bool eof = sorter.empty();
			put(sl[i], len, eof);
			i ^= 1;
			if (eof)
				break;
		}
		wt.join();
	}
	if (err)
		fail("writing " + tmp + ": " + strerror(err));
	if (ftruncate(ofd, bytes) || fsync(ofd) || close(ofd))
		fail("finishing " + tmp + ": " + strerror(errno));
	if (!sorted || n_out != n_in || h_out != h_in) {
		fail(std::string("output check failed: ") + (sorted ? "" : "not sorted; ") +
		     "records in " + std::to_string(n_in) + " out " + std::to_string(n_out) +
		     (h_out != h_in ? "; checksum differs" : ""));
	}
	if (rename(tmp.c_str(), out))
		fail("rename " + tmp + " -> " + out + ": " + strerror(errno));
	g_tmp.clear();
	double secs = t_all.seconds();

	printf("algo=sort impl=stxxl format=%s bytes=%llu secs=%.3f mbps=%.1f mem=%llu "
	       "run_secs=%.3f merge_secs=%.3f run_peak_rss=%llu peak_rss=%llu\n",
	       fmt, (unsigned long long)bytes, secs, bytes / secs / 1e6,
	       (unsigned long long)mem, run_secs, secs - run_secs,
	       (unsigned long long)run_rss, (unsigned long long)peak_rss());
	for (slot& s : sl)
		free(s.buf);
	return 0;
}

bool parse_size(const char* s, uint64_t* out)
{
	char* end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return false;
	switch (*end) {
	case 'k': case 'K': v *= 1024.0; end++; break;
	case 'm': case 'M': v *= 1048576.0; end++; break;
	case 'g': case 'G': v *= 1073741824.0; end++; break;
	case 't': case 'T': v *= 1099511627776.0; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return false;
	*out = (uint64_t)v;
	return true;
}

[[noreturn]] void usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: stxxl_sort [--format u64|rec100] [--io syscall|linuxaio] MEM SCRATCH IN OUT\n"
		"  MEM      memory budget in bytes (K/M/G suffixes)\n"
		"  SCRATCH  directory for STXXL's disk file (or set STXXLCFG)\n");
	exit(rc);
}

} // namespace

int main(int argc, char** argv)
{
	std::string fmt = "u64", io = "syscall";
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		std::string a = argv[i];
		if (a == "--help")
			usage(0);
		if ((a == "--format" || a == "--io") && i + 1 < argc)
			(a == "--format" ? fmt : io) = argv[++i];
		else
			usage(2);
	}
	if (argc - i != 4)
		usage(2);
	uint64_t mem;
	if (!parse_size(argv[i], &mem)) {
		fprintf(stderr, "stxxl_sort: error: bad MEM '%s'\n", argv[i]);
		usage(2);
	}
	const std::string scratch = argv[i + 1];
	const char* in = argv[i + 2];
	const char* out = argv[i + 3];
	if (fmt != "u64" && fmt != "rec100")
		usage(2);
	if (io != "syscall" && io != "linuxaio")
		usage(2);

	struct stat st;
	if (stat(scratch.c_str(), &st) || !S_ISDIR(st.st_mode))
		fail("scratch directory " + scratch + " does not exist");
	// Keep STXXL's log files out of the working directory.
	setenv("STXXLLOGFILE", (scratch + "/stxxl.log").c_str(), 0);
	setenv("STXXLERRLOGFILE", (scratch + "/stxxl.errlog").c_str(), 0);
	stxxl::config* cfg = stxxl::config::get_instance();
	if (const char* f = getenv("STXXLCFG"))
		cfg->load_config_file(f);
	else
		cfg->add_disk(stxxl::disk_config("disk=" + scratch + "/stxxl.disk,0," + io +
						 " unlink_on_open"));

	try {
		if (fmt == "u64")
			return run<uint64_t, u64_cmp>(mem, in, out, "u64");
		return run<rec100, rec100_cmp>(mem, in, out, "rec100");
	} catch (const std::exception& e) {
		fail(std::string("STXXL: ") + e.what());
	}
}
