# pems - plain Makefile.  make | make check | make demo | make asan | make ubsan
#        make tsan | make fuzz | make bench | make install PREFIX=... | V=1 for full commands
PREFIX ?= /usr/local
BUILD  ?= build
CC     ?= cc
MPICC  ?= mpicc
OPT    ?= -O2 -g
WERROR ?= -Werror
CFLAGS_BASE = -std=gnu11 $(OPT) -Wall -Wextra $(WERROR) -fPIC -pthread \
              -D_GNU_SOURCE -fvisibility=hidden $(SAN)
MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS := $(shell mpicc --showme:link 2>/dev/null || echo -lmpi)
# dlopen is in libc from glibc 2.34 on; older C libraries need -ldl
DL_LIBS := $(shell printf '\043include <dlfcn.h>\nint main(void) { return !dlopen; }\n' | \
	$(CC) -x c -o /dev/null - 2>/dev/null || echo -ldl)
# No program links libmpi: MPI is in the plugin $(BUILD)/libpems-mpi.so,
# which pems/transport.c dlopen()s under mpirun only (mpi/mpi_plugin.h).
LDLIBS = -luring -laio -lzstd $(DL_LIBS) -lpthread -lm
PLUGIN = $(BUILD)/libpems-mpi.so
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

ifeq ($(V),1)
Q =
else
Q = @
endif

# Layering is enforced by include paths: each layer sees only itself and
# the layers below it (STYLE.md rule 5), so an #include across the rule
# fails to compile.  io/ sees io/; pems/ sees io/, mpi/'s plugin header,
# its own headers and include/; bsp/ sees include/ and pems/api/ only
# (pems_rt.h: the runtime as the BSP layer uses it, not pems/rt.h or the
# module headers); algorithms/ sees include/ and algorithms/; gen/ those
# and gen/; model/ and cli/ those, gen/ and model/.
INC_io   = -Iio
INC_mpi  = -Impi $(MPI_CFLAGS)
INC_pems = -Iio -Impi -Ipems -Ipems/api -Iinclude
INC_bsp  = -Ipems/api -Iinclude
INC_alg  = -Iinclude -Ialgorithms
INC_gen  = -Iinclude -Ialgorithms -Igen
INC_model = -Iinclude -Ialgorithms -Igen -Imodel
INC_cli  = -Iinclude -Ialgorithms -Igen -Imodel
INC_test = -Iinclude -Ialgorithms -Igen -Imodel -Iio -Ipems -Ipems/api -Itests

IO_SRC   = $(wildcard io/*.c)
PEMS_SRC = $(wildcard pems/*.c)
BSP_SRC  = $(wildcard bsp/*.c)
ALG_SRC  = $(wildcard algorithms/*/*.c algorithms/*.c)
GEN_SRC  = $(wildcard gen/*.c)
MODEL_SRC = $(wildcard model/*.c)
CLI_SRC  = $(wildcard cli/*.c)
TEST_SRC = $(wildcard tests/check_*.c)
EX_SRC   = $(wildcard examples/*.c)

LIB_OBJ = $(IO_SRC:%.c=$(BUILD)/%.o) $(PEMS_SRC:%.c=$(BUILD)/%.o) \
          $(BSP_SRC:%.c=$(BUILD)/%.o)
# The bundled algorithms are an internal archive for pems-run, the tests
# and the fuzz targets, neither in libpems.a/.so nor installed: their API
# (algorithms/pems_algorithms.h) changes with the formats (docs/design.md).
ALG_OBJ = $(ALG_SRC:%.c=$(BUILD)/%.o)
ALG_LIB = $(BUILD)/libpems-algorithms.a
CLI_OBJ = $(CLI_SRC:%.c=$(BUILD)/%.o)
# the cost model: a library of its own over the public API and the algorithms
MODEL_OBJ = $(MODEL_SRC:%.c=$(BUILD)/%.o)
MODEL_LIB = $(BUILD)/libpems-model.a
# test data generators, used by pems-run gen and the model's calibration
GEN_OBJ = $(GEN_SRC:%.c=$(BUILD)/%.o)
GEN_LIB = $(BUILD)/libpems-gen.a
TESTS   = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
EXAMPLES = $(EX_SRC:examples/%.c=$(BUILD)/examples/%)
# plain BSPlib programs (tests/bsplib): NAME98.c in the 1998 int dialect
# only, the others in both (NAME, NAME.98); check_bsplib runs them
BSPLIB_SRC = $(wildcard tests/bsplib/*.c)
BSPLIB_98 = $(filter %98.c,$(BSPLIB_SRC))
BSPLIB_BIN = $(BSPLIB_SRC:tests/bsplib/%.c=$(BUILD)/tests/bsplib/%) \
	$(patsubst tests/bsplib/%.c,$(BUILD)/tests/bsplib/%.98,$(filter-out $(BSPLIB_98),$(BSPLIB_SRC)))
BSPLIB_CFLAGS = -std=gnu11 $(OPT) -Wall -Wextra -Werror -Werror=incompatible-pointer-types \
	-ffp-contract=off $(SAN) -Iinclude
BENCH_SRC = $(wildcard bench/*.c)
BENCH_BIN = $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

VERSION = 0.1.0
SOMAJOR = 0

all: $(BUILD)/libpems.a $(BUILD)/libpems.so $(ALG_LIB) $(BUILD)/pems-run $(PLUGIN) $(EXAMPLES) $(BENCH_BIN)

# The library's own writable data goes to sections of its own, which the
# linker keeps apart from the program's .data/.bss: what pems/globals.c
# gives each VP a copy of is then the program's globals alone.
KEEP_APART = objcopy --rename-section .data=pems_rwdata --rename-section .bss=pems_rwbss \
	--rename-section .data.rel.local=pems_rwdata --rename-section .data.rel=pems_rwdata

$(BUILD)/io/%.o: io/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_io) -MMD -MP -c $< -o $@
	$(Q)$(KEEP_APART) $@
$(BUILD)/pems/%.o: pems/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_pems) -MMD -MP -c $< -o $@
	$(Q)$(KEEP_APART) $@
# where transport.c looks for the plugin: this build dir, the install libdir
$(BUILD)/pems/transport.o: CFLAGS_BASE += -DPEMS_BUILD_DIR='"$(abspath $(BUILD))"' \
	-DPEMS_LIBDIR='"$(PREFIX)/lib/pems"'
$(BUILD)/mpi/%.o: mpi/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_mpi) -MMD -MP -c $< -o $@
$(BUILD)/bsp/%.o: bsp/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_bsp) -MMD -MP -c $< -o $@
	$(Q)$(KEEP_APART) $@
$(BUILD)/algorithms/%.o: algorithms/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_alg) -MMD -MP -c $< -o $@
	$(Q)$(KEEP_APART) $@
$(BUILD)/gen/%.o: gen/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_gen) -MMD -MP -c $< -o $@
$(BUILD)/model/%.o: model/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_model) -MMD -MP -c $< -o $@
$(BUILD)/cli/%.o: cli/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_cli) -MMD -MP -c $< -o $@

# again at archive time (-p keeps the dates): an object compiled before
# the rename existed must not bring its globals into the program's
$(BUILD)/libpems.a: $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)for o in $^; do $(KEEP_APART) -p $$o || exit 1; done
	$(Q)rm -f $@ && ar rcs $@ $^
$(ALG_LIB): $(ALG_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
$(MODEL_LIB): $(MODEL_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
$(GEN_LIB): $(GEN_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
# after libpems.a, whose rule renames the objects' sections (not twice at once)
$(BUILD)/libpems.so: $(LIB_OBJ) | $(BUILD)/libpems.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SAN) -shared -Wl,-soname,libpems.so.$(SOMAJOR) -o $@ $^ $(LDLIBS)
$(PLUGIN): $(BUILD)/mpi/mpi_plugin.o
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SAN) -shared -o $@ $^ $(MPI_LIBS)
$(BUILD)/pems-run: $(CLI_OBJ) $(MODEL_LIB) $(GEN_LIB) $(ALG_LIB) $(BUILD)/libpems.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SAN) -pthread -o $@ $(CLI_OBJ) $(MODEL_LIB) $(GEN_LIB) $(ALG_LIB) $(BUILD)/libpems.a $(LDLIBS)
$(BUILD)/examples/%: examples/%.c $(BUILD)/libpems.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) -Iinclude -o $@ $< $(BUILD)/libpems.a $(LDLIBS)
$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(MODEL_LIB) $(GEN_LIB) $(ALG_LIB) $(BUILD)/libpems.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_test) -o $@ $< $(MODEL_LIB) $(GEN_LIB) $(ALG_LIB) $(BUILD)/libpems.a $(LDLIBS) $(CHECK_LIBS)

$(BUILD)/tests/bsplib/%98: tests/bsplib/%98.c $(BUILD)/libpems.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(BSPLIB_CFLAGS) -DBSPLIB_1998 -o $@ $< $(BUILD)/libpems.a $(LDLIBS)
$(BUILD)/tests/bsplib/%.98: tests/bsplib/%.c $(BUILD)/libpems.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(BSPLIB_CFLAGS) -DBSPLIB_1998 -o $@ $< $(BUILD)/libpems.a $(LDLIBS)
$(BUILD)/tests/bsplib/%: tests/bsplib/%.c $(BUILD)/libpems.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(BSPLIB_CFLAGS) -o $@ $< $(BUILD)/libpems.a $(LDLIBS)

deps:
	@bash scripts/deps.sh

check: deps check-format
	$(MAKE) all-tests
	@BUILD=$(BUILD) PEMS_SAN="$(SAN)" bash tests/run.sh

# house style: whitespace and layout (.editorconfig); structure: file and
# function sizes, layering of includes and calls (nm on $(BUILD)'s objects)
check-format:
	@bash scripts/check-format.sh
check-structure:
	@bash scripts/check-structure.sh $(BUILD)

all-tests: all $(TESTS) $(BSPLIB_BIN)

demo: deps
	$(MAKE) all
	@BUILD=$(BUILD) bash scripts/demo.sh

asan:
	$(MAKE) check BUILD=build-asan OPT="-O1 -g" SAN="-fsanitize=address -fno-omit-frame-pointer"
ubsan:
	$(MAKE) check BUILD=build-ubsan OPT="-O1 -g" SAN="-fsanitize=undefined -fno-sanitize-recover=undefined"

# ThreadSanitizer: VPs are fibers announced to TSan (pems/sched.c);
# tests/tsan.supp lists what is suppressed and why.  PEMS_TEST_REDUCED=1
# (the caller's value wins): check_bsp and check_mpi_bsp leave out their
# configurations of 256+ VPs, which take most of the time under TSan.
tsan:
	PEMS_TEST_REDUCED="$${PEMS_TEST_REDUCED:-1}" \
	TSAN_OPTIONS="$${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp}" \
	$(MAKE) check BUILD=build-tsan OPT="-O1 -g" SAN="-fsanitize=thread"

# ---- fuzzing (tests/fuzz/) ----
# Each target TARGET is tests/fuzz/fuzz_TARGET.c plus the sources listed
# in FUZZ_SRC_TARGET; replay-TARGET (plain main, built by all-tests with
# any compiler) reruns tests/fuzz/corpus/TARGET/ in make check;
# `make fuzz` builds libFuzzer binaries with clang into build-fuzz/fuzz/.
FUZZ_TARGETS = cli csv csvrec libsvm records manifest
INC_fuzz = -Iinclude -Ialgorithms -Igen -Imodel -Icli -Itests/fuzz
# the CLI's files but main.c and those a target includes (cli_X.c includes cli/X.c)
FUZZ_CLI_LIB = $(filter-out cli/main.c,$(CLI_SRC))
FUZZ_SRC_cli = $(wildcard tests/fuzz/cli_*.c) tests/fuzz/stub_main.c
FUZZ_OBJ_cli = $(patsubst %.c,$(BUILD)/%.o,$(filter-out \
	$(patsubst tests/fuzz/cli_%.c,cli/%.c,$(wildcard tests/fuzz/cli_*.c)),$(FUZZ_CLI_LIB)))
FUZZ_INC_manifest = -Iio -Ipems -Ipems/api	# pems/checkpoint.h: the parser is internal
FUZZ_REPLAY = $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay-%)
FUZZ_BIN = $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz-%)
FUZZ_DEPS = tests/fuzz/fuzz_util.c $(wildcard tests/fuzz/*.h) $(MODEL_LIB) $(GEN_LIB) $(ALG_LIB) $(BUILD)/libpems.a
all-tests: $(FUZZ_REPLAY)

.SECONDEXPANSION:
$(BUILD)/fuzz/replay-%: tests/fuzz/replay.c tests/fuzz/fuzz_%.c $$(FUZZ_SRC_$$*) $$(FUZZ_OBJ_$$*) $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_fuzz) $(FUZZ_INC_$*) -o $@ tests/fuzz/replay.c tests/fuzz/fuzz_$*.c \
		$(FUZZ_SRC_$*) tests/fuzz/fuzz_util.c $(FUZZ_OBJ_$*) $(MODEL_LIB) $(GEN_LIB) $(ALG_LIB) $(BUILD)/libpems.a $(LDLIBS)
$(BUILD)/fuzz/fuzz-%: tests/fuzz/fuzz_%.c $$(FUZZ_SRC_$$*) $$(FUZZ_OBJ_$$*) $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(CFLAGS_BASE) -fsanitize=fuzzer $(INC_fuzz) $(FUZZ_INC_$*) -o $@ tests/fuzz/fuzz_$*.c \
		$(FUZZ_SRC_$*) tests/fuzz/fuzz_util.c $(FUZZ_OBJ_$*) $(MODEL_LIB) $(GEN_LIB) $(ALG_LIB) $(BUILD)/libpems.a $(LDLIBS)

fuzz:
	$(MAKE) fuzz-bin BUILD=build-fuzz CC=clang OPT="-O1 -g" \
		SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
fuzz-bin: $(FUZZ_BIN)

bench: deps
	$(MAKE) all
	@BUILD=$(BUILD) bash bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/pems $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 $(BUILD)/libpems.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libpems.so $(DESTDIR)$(PREFIX)/lib/libpems.so.$(VERSION)
	ln -sf libpems.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libpems.so.$(SOMAJOR)
	ln -sf libpems.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libpems.so
	install -m 755 $(PLUGIN) $(DESTDIR)$(PREFIX)/lib/pems/
	install -m 644 include/bsp.h include/pems.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(BUILD)/pems-run $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/pems-run.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/pems.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
		'Name: pems' 'Description: bulk-synchronous external-memory computing (BSPlib + extensions)' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lpems' \
		'Libs.private: $(LDLIBS)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/pems.pc
	sed -e 's/^Name: pems/Name: pems-bsplib1998/' -e 's|^Cflags: .*|& -DBSPLIB_1998|' \
		-e 's/(BSPlib + extensions)/(BSPlib 1998 int dialect)/' \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/pems.pc > $(DESTDIR)$(PREFIX)/lib/pkgconfig/pems-bsplib1998.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libpems.a $(DESTDIR)$(PREFIX)/lib/libpems.so* \
		$(DESTDIR)$(PREFIX)/lib/pems/libpems-mpi.so \
		$(DESTDIR)$(PREFIX)/include/bsp.h $(DESTDIR)$(PREFIX)/include/pems.h \
		$(DESTDIR)$(PREFIX)/bin/pems-run $(DESTDIR)$(PREFIX)/lib/pkgconfig/pems.pc \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/pems-bsplib1998.pc \
		$(DESTDIR)$(PREFIX)/share/man/man1/pems-run.1 $(DESTDIR)$(PREFIX)/share/man/man3/pems.3
	rmdir $(DESTDIR)$(PREFIX)/lib/pems 2>/dev/null || true

clean:
	rm -rf build build-asan build-ubsan build-tsan build-fuzz

.PHONY: all deps check check-format check-structure all-tests demo asan ubsan tsan fuzz fuzz-bin bench install uninstall clean
.SECONDARY:
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# bench/ tools: C programs linked against libpems (internal headers allowed)
bench-bin: $(BENCH_BIN)
$(BUILD)/bench/%: bench/%.c $(BUILD)/libpems.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_BASE) $(INC_test) -o $@ $< $(BUILD)/libpems.a $(LDLIBS)
.PHONY: bench-bin
